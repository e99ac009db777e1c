// Package integration holds the integration suite: real API servers (a hub
// and spokes) started in this test process, driven through real clients.
package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	suiteCtx context.Context
	// hubCP is the hub every spec may use; specs create their own namespaces.
	hubCP *framework.ControlPlane
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Integration")
}

var _ = BeforeSuite(func() {
	// The API servers in this process log a great deal: keep it for failures.
	klog.LogToStderr(false)
	klog.SetOutput(GinkgoWriter)
	ctrl.SetLogger(klog.NewKlogr())
	suiteCtx = context.Background()
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	var err error
	hubCP, err = framework.Start(suiteCtx, framework.Hub)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(hubCP.Stop)
	hubWatchCaches = readWatchCaches(suiteCtx)
})
