package devcluster

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// schedulerArgs are the kube-scheduler flags of a dev cluster: no leader
// election (one scheduler per cluster) and no serving endpoint of its own.
func schedulerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}
}

// runScheduler configures kube-scheduler from flags, waits until its caches
// are in sync and runs it until ctx ends. Errors while configuring are
// returned; the returned channel is closed when the scheduler has stopped.
//
// It does what kube-scheduler's app.Run does without the parts that may
// happen only once per process (configz registration, the secure server),
// so that tests can run several dev clusters side by side.
func runScheduler(ctx context.Context, args []string) (<-chan struct{}, error) {
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-scheduler flags: %w", err)
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	cc, sched, err := app.Setup(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	cc.EventBroadcaster.StartRecordingToSink(ctx.Done())
	cc.InformerFactory.Start(ctx.Done())
	cc.DynInformerFactory.Start(ctx.Done())
	cc.InformerFactory.WaitForCacheSync(ctx.Done())
	cc.DynInformerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cc.EventBroadcaster.Shutdown()
		return nil, fmt.Errorf("kube-scheduler caches: %w", err)
	}
	klog.FromContext(ctx).V(1).Info("kube-scheduler ready")

	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cc.EventBroadcaster.Shutdown()
		defer cc.InformerFactory.Shutdown()
		sched.Run(ctx)
	}()
	return done, nil
}
