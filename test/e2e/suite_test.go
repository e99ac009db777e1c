// Package e2e runs the real binaries as separate processes over TLS on
// 127.0.0.1 and drives them as a user would.
package e2e

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var binDir = flag.String("bin-dir", "../../bin", "directory holding the built binaries (make build)")

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "End to end")
}

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	abs, err := filepath.Abs(*binDir)
	Expect(err).NotTo(HaveOccurred())
	*binDir = abs
	_, err = os.Stat(filepath.Join(abs, "flotilla-hub"))
	Expect(err).NotTo(HaveOccurred(), "build the binaries first: make build")
})
