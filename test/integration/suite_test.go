// Package integration holds the integration suite: real API servers (a hub
// and spokes) started in this test process, driven through real clients.
//
// `make test-integration` runs it with the ginkgo command line, on several
// processes at once (each with a hub of its own), and reports each spec as
// it ends; what the servers, agents and CLI runs log is kept for the specs
// that fail (specLog).
package integration

import (
	"context"
	"flag"
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
	// The API servers in this process log a great deal: keep it for failures,
	// errors too (klog writes those to stderr as well by default).
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	Expect(flags.Set("logtostderr", "false")).To(Succeed())
	Expect(flags.Set("stderrthreshold", "FATAL")).To(Succeed())
	klog.SetOutput(specLog)
	ctrl.SetLogger(klog.NewKlogr())
	suiteCtx = context.Background()
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	var err error
	hubCP, err = framework.Start(suiteCtx, framework.Hub)
	if err != nil {
		GinkgoWriter.Write(specLog.Take())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(hubCP.Stop)
	hubWatchCaches = readWatchCaches(suiteCtx)
	specLog.Take()
})

// Every spec's log reaches its report when it fails, after its last
// cleanup (this one, registered first, runs last), and is dropped when it
// passes. What is logged between two specs of this process goes with the
// next one.
var _ = BeforeEach(func() {
	DeferCleanup(func() {
		log := specLog.Take()
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Write(log)
		}
	})
})

// specLog is what the API servers, controllers, agents and CLI runs of
// this process log: a spec's report shows it only if the spec fails, so
// that the report of a passing spec stays one block of its steps.
var specLog = &framework.Buffer{}
