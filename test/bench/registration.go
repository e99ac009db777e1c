package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/agent/spokeclient"
	"github.com/flotilla-io/flotilla/agent/work"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/test/framework"
)

var benchClusters = flag.Int("clusters", 100, "registration, fleet: how many clusters join")

// benchRegistration joins many clusters at once, each through the real agent
// code (own key, CSR, lease) running in this process against one shared
// spoke API server, accepted with `flotilla accept`; it reports the time
// from the agents' start until every cluster is Available, the hub's memory
// per accepted cluster, and the RSS of one real agent process.
func benchRegistration(ctx context.Context, e *env) error {
	n := *benchClusters
	quietKlog()
	procs, err := startHubAndSpoke(ctx, e, "reg")
	if err != nil {
		return err
	}
	defer procs.stop()
	hubProc, spokeProc, join := procs.hub, procs.spoke, procs.join
	bootstrap, err := bootstrapKubeconfig(hubProc.Kubeconfig, join.URL, join.Token, filepath.Join(e.workDir, "bootstrap.kubeconfig"))
	if err != nil {
		return err
	}
	hubClient, err := adminClient(hubProc.Kubeconfig)
	if err != nil {
		return err
	}
	rssBefore, err := hubProc.RSS()
	if err != nil {
		return err
	}

	names := clusterNames("bench", n)
	started := time.Now()
	stopAgents, err := startAgents(ctx, names, []string{spokeProc.Kubeconfig}, bootstrap, 0)
	if err != nil {
		return err
	}
	defer stopAgents()
	acceptedAt, err := acceptAll(ctx, hubProc, hubClient, names)
	if err != nil {
		return err
	}
	accepted, available := acceptedAt.Sub(started), time.Since(started)
	rssAfter, err := hubProc.RSS()
	if err != nil {
		return err
	}

	row(fmt.Sprintf("%d clusters: start to accepted and joined", n), seconds(accepted), "")
	row(fmt.Sprintf("%d clusters: start to all Available", n), seconds(available), "< 60 s for 500")
	row("hub RSS per accepted cluster", fmt.Sprintf("%.0f KiB", float64(rssAfter-rssBefore)/float64(n)/1024), "")
	row("hub RSS with all clusters", mib(rssAfter), "")
	stopAgents()

	rss, err := idleAgentRSS(ctx, e, hubProc, spokeProc, join.Token, join.URL)
	if err != nil {
		return err
	}
	row("idle agent RSS (one flotilla-agent process)", mib(rss), "≤ 46 MiB (half of OCM's agent, 93.5 MiB)")
	return nil
}

// idleAgentRSS joins one more cluster with a real flotilla-agent process
// and reads its memory once it is Available and has idled.
func idleAgentRSS(ctx context.Context, e *env, hubProc, spokeProc *framework.HubProcess, token, url string) (int64, error) {
	const name = "bench-agent-process"
	bootstrap, err := bootstrapKubeconfig(hubProc.Kubeconfig, url, token, filepath.Join(e.workDir, "agent-bootstrap.kubeconfig"))
	if err != nil {
		return 0, err
	}
	p, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-agent"), "--kubeconfig", spokeProc.Kubeconfig,
		"--bootstrap-kubeconfig", bootstrap, "--cluster-name", name, "--namespace", "agent-"+name,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	if err != nil {
		return 0, err
	}
	defer p.Stop(time.Minute)
	if _, err := flotilla(ctx, "accept", "--kubeconfig", hubProc.Kubeconfig, "--clusters", name, "--wait", "--timeout", "2m"); err != nil {
		return 0, fmt.Errorf("%w\nagent output:\n%s", err, p.Tail(20))
	}
	c, err := adminClient(hubProc.Kubeconfig)
	if err != nil {
		return 0, err
	}
	if err := waitAllAvailable(ctx, c, []string{name}, 2*time.Minute); err != nil {
		return 0, err
	}
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return p.RSS()
}

// joinInfo is what `flotilla init -o json` prints.
type joinInfo struct {
	Token string `json:"hub-token"`
	URL   string `json:"hub-apiserver"`
}

// hubAndSpoke is a hub process, initialised for joining, and a spoke
// process for its agents.
type hubAndSpoke struct {
	hub, spoke *framework.HubProcess
	join       joinInfo
}

// startHubAndSpoke starts a hub and a spoke in the work directory, their
// data directories named after prefix, and runs `flotilla init` on the hub.
func startHubAndSpoke(ctx context.Context, e *env, prefix string) (*hubAndSpoke, error) {
	return startHubAndSpokeWith(ctx, e, prefix, e.binDir)
}

// startHubAndSpokeWith is startHubAndSpoke with the hub's flotilla-hub
// taken from hubBinDir and given hubArgs.
func startHubAndSpokeWith(ctx context.Context, e *env, prefix, hubBinDir string, hubArgs ...string) (*hubAndSpoke, error) {
	p := &hubAndSpoke{}
	// Side by side: neither start is measured here.
	var g errgroup.Group
	g.Go(func() (err error) {
		p.hub, err = framework.StartHubProcess(ctx, hubBinDir, filepath.Join(e.workDir, prefix+"-hub"), 2*time.Minute, hubArgs...)
		return err
	})
	g.Go(func() (err error) {
		p.spoke, err = framework.StartHubProcess(ctx, e.binDir, filepath.Join(e.workDir, prefix+"-spoke"), 2*time.Minute)
		return err
	})
	err := g.Wait()
	if err != nil {
		p.stop()
		return nil, err
	}
	if p.join, err = initHub(ctx, p.hub); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// stop stops the processes started, side by side.
func (p *hubAndSpoke) stop() {
	var wg sync.WaitGroup
	for _, proc := range []*framework.HubProcess{p.spoke, p.hub} {
		if proc != nil {
			wg.Go(func() { proc.Stop(time.Minute) })
		}
	}
	wg.Wait()
}

// initHub runs `flotilla init` against a hub and returns the join token and URL.
func initHub(ctx context.Context, hubProc *framework.HubProcess) (joinInfo, error) {
	var join joinInfo
	out, err := flotilla(ctx, "init", "--kubeconfig", hubProc.Kubeconfig, "-o", "json")
	if err != nil {
		return join, err
	}
	if err := json.Unmarshal([]byte(out), &join); err != nil {
		return join, fmt.Errorf("flotilla init -o json: %w", err)
	}
	return join, nil
}

// flotilla runs the CLI in this process and returns its standard output.
func flotilla(ctx context.Context, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	if code := cli.Run(ctx, cli.IOStreams{In: os.Stdin, Out: &out, ErrOut: &errOut}, args); code != 0 {
		return "", fmt.Errorf("flotilla %s: exit %d: %s", args[0], code, errOut.String())
	}
	return out.String(), nil
}

// bootstrapKubeconfig writes the kubeconfig `flotilla join` would store
// and returns its path.
func bootstrapKubeconfig(adminKubeconfig, url, token, path string) (string, error) {
	return path, framework.WriteBootstrapKubeconfig(adminKubeconfig, url, token, path)
}

func adminClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	return client.New(cfg, client.Options{Scheme: hub.Scheme()})
}

// clusterNames returns n cluster names: prefix-0000, prefix-0001, ...
func clusterNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return names
}

// startAgents runs one agent per name in this process, each with its own
// identity on the hub (key, CSR, lease, namespace-scoped watches), the
// i-th applying into the spoke of spokeKubeconfigs[i % len], each in its
// own namespace there. resync is the work agents' resync interval (0: the
// default). The returned function stops them all and waits until they
// have. The caller silences klog first (quietKlog).
func startAgents(ctx context.Context, names []string, spokeKubeconfigs []string, bootstrap string, resync time.Duration) (stop func(), err error) {
	hubURL, err := serverOf(bootstrap)
	if err != nil {
		return nil, err
	}
	// The agents of a spoke share one managed cluster, so they share its
	// REST mapper too: each of its own would hold the spoke's whole
	// discovery.
	mappers := make([]meta.RESTMapper, len(spokeKubeconfigs))
	for i, kubeconfig := range spokeKubeconfigs {
		spokeCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, err
		}
		if mappers[i], err = spokeclient.NewMapper(spokeCfg, nil); err != nil {
			return nil, err
		}
	}
	agentCtx, cancel := context.WithCancel(ctx)
	var agents sync.WaitGroup
	for i, name := range names {
		spoke := i % len(spokeKubeconfigs)
		opts := agent.Options{
			ClusterName:         name,
			Namespace:           "agent-" + name,
			SpokeKubeconfig:     spokeKubeconfigs[spoke],
			BootstrapKubeconfig: bootstrap,
			WorkResyncInterval:  resync,
			// Every agent applies into the same spoke for the same hub:
			// each needs AppliedManifestWork names of its own.
			HubHash:         work.HubHash(hubURL + "#" + name),
			SpokeMapper:     mappers[spoke],
			MetricsAddr:     "0",
			HealthProbeAddr: "0",
		}
		if err := opts.Validate(); err != nil {
			cancel()
			return nil, err
		}
		agents.Go(func() { _ = agent.Run(agentCtx, opts) })
	}
	var once sync.Once
	return func() { once.Do(func() { cancel(); agents.Wait() }) }, nil
}

// quietKlog keeps the log of hundreds of agents in one process, errors
// included, out of the figures.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		_ = fs.Set(name, value)
	}
	klog.SetOutput(io.Discard)
	ctrl.SetLogger(klog.NewKlogr())
}

// serverOf returns the API server URL of a kubeconfig's current context.
func serverOf(kubeconfig string) (string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", err
	}
	return cfg.Host, nil
}

// acceptAll accepts the named clusters with `flotilla accept --wait`,
// returns when that finished, and waits until every one is Available.
func acceptAll(ctx context.Context, hubProc *framework.HubProcess, c client.Client, names []string) (time.Time, error) {
	if _, err := flotilla(ctx, "accept", "--kubeconfig", hubProc.Kubeconfig, "--clusters", strings.Join(names, ","), "--wait", "--timeout", "45m"); err != nil {
		return time.Time{}, err
	}
	accepted := time.Now()
	return accepted, waitAllAvailable(ctx, c, names, 30*time.Minute)
}

// waitAllAvailable waits until every named ManagedCluster is Available.
func waitAllAvailable(ctx context.Context, c client.Client, names []string, timeout time.Duration) error {
	return waitAllClusters(ctx, c, names, "Available", timeout, func(mc *clusterv1.ManagedCluster) bool {
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	})
}

// waitAllClusters waits until ok holds for every named ManagedCluster;
// what says what ok means, for the error.
func waitAllClusters(ctx context.Context, c client.Client, names []string, what string, timeout time.Duration, ok func(*clusterv1.ManagedCluster) bool) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var missing int
	// A list of thousands of clusters is work for the hub under test:
	// ask less often the more there are.
	every := max(250*time.Millisecond, time.Duration(len(names))*200*time.Microsecond)
	err := wait.PollUntilContextTimeout(ctx, every, timeout, true, func(ctx context.Context) (bool, error) {
		list := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, list); err != nil {
			return false, nil
		}
		missing = len(want)
		for i := range list.Items {
			if want[list.Items[i].Name] && ok(&list.Items[i]) {
				missing--
			}
		}
		return missing == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d clusters not %s after %s: %w", missing, len(want), what, timeout, err)
	}
	return nil
}
