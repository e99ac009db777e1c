package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	agentproxy "github.com/flotilla-io/flotilla/agent/proxy"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

var (
	proxyTunnels  = flag.String("proxy-tunnels", "100", "comma-separated numbers of idle tunnels whose hub memory the proxy scenario measures")
	proxyRequests = flag.Int("proxy-requests", 500, "GETs timed through the hub and straight to the spoke")
)

// benchProxy times a GET through the cluster proxy against the same GET
// straight to the spoke, the throughput of a large LIST through it, and
// the hub's memory per idle tunnel.
//
// The hub is the pprof hub (test/bench/pprofhub, the same hub.Run as
// flotilla-hub) so that its live heap can be read after a GC: RSS alone
// moves by more than 100 tunnels take as the runtime returns memory.
func benchProxy(ctx context.Context, e *env) error {
	quietKlog()
	bin, err := buildPprofHub(ctx, e)
	if err != nil {
		return err
	}
	procs, err := startHubAndSpokeWith(ctx, e, "proxy", filepath.Dir(bin), "--mode", "all")
	if err != nil {
		return err
	}
	defer procs.stop()
	hut := &hubUnderTest{HubProcess: procs.hub, pprofDirs: []string{filepath.Join(e.workDir, "proxy-hub")}}
	bootstrap, err := bootstrapKubeconfig(procs.hub.Kubeconfig, procs.join.URL, procs.join.Token, filepath.Join(e.workDir, "proxy-bootstrap.kubeconfig"))
	if err != nil {
		return err
	}
	hubClient, err := adminClient(procs.hub.Kubeconfig)
	if err != nil {
		return err
	}
	counts, err := tunnelCounts(*proxyTunnels)
	if err != nil {
		return err
	}
	n := slices.Max(counts)
	names := clusterNames("proxy", n)
	stopAgents, err := startAgents(ctx, names, []string{procs.spoke.Kubeconfig}, bootstrap, 0)
	if err != nil {
		return err
	}
	defer stopAgents()
	if _, err := acceptAll(ctx, procs.hub, hubClient, names); err != nil {
		return err
	}

	// The agents above run no tunnel: the benchmark opens the tunnels
	// itself, with each agent's client certificate, so that it can close
	// them again.
	spokeCfg, err := clientcmd.BuildConfigFromFlags("", procs.spoke.Kubeconfig)
	if err != nil {
		return err
	}
	// The spoke's admin client creates the LIST's 2,000 objects: not at
	// client-go's default 5 a second.
	spokeAdmin := rest.CopyConfig(spokeCfg)
	spokeAdmin.QPS, spokeAdmin.Burst = 200, 400
	spoke := kubernetes.NewForConfigOrDie(spokeAdmin)
	hubCfgs := make([]*rest.Config, n)
	for i, name := range names {
		if hubCfgs[i], err = agentHubConfig(ctx, spoke, name, procs.join.URL); err != nil {
			return err
		}
	}
	// open opens the tunnels of the first count clusters and waits until
	// the hub says each is connected; the returned func closes them and
	// waits until the hub says each is not.
	open := func(count int) (closeAll func() error, err error) {
		tunnelCtx, stop := context.WithCancel(ctx)
		for i := range count {
			go func() {
				_ = agentproxy.Run(tunnelCtx, agentproxy.Config{ClusterName: names[i], AgentID: "bench", Hub: hubCfgs[i], Spoke: spokeCfg})
			}()
		}
		closeAll = func() error {
			stop()
			return waitAllClusters(ctx, hubClient, names[:count], "tunnel closed", 10*time.Minute, func(mc *clusterv1.ManagedCluster) bool {
				return !meta.IsStatusConditionTrue(mc.Status.Conditions, tunnel.ConditionConnected)
			})
		}
		err = waitAllClusters(ctx, hubClient, names[:count], "TunnelConnected", 10*time.Minute, func(mc *clusterv1.ManagedCluster) bool {
			return meta.IsStatusConditionTrue(mc.Status.Conditions, tunnel.ConditionConnected)
		})
		if err != nil {
			stop()
		}
		return closeAll, err
	}
	// The memory of count idle tunnels is the hub's with them open less
	// its own right after they closed: both read in the same steady
	// state of the fleet (whose heartbeats, status writes and caches move
	// the hub's heap by more than 100 tunnels take), each after a pause.
	// The ManagedClusters' status has a TunnelConnected condition both
	// times, True and then False.
	for _, count := range counts {
		closeAll, err := open(count)
		if err != nil {
			return err
		}
		if err := pause(ctx, 5*time.Second); err != nil {
			return err
		}
		withTunnels, err := readHubMemory(ctx, hut)
		if err != nil {
			return err
		}
		if err := closeAll(); err != nil {
			return err
		}
		if err := pause(ctx, 5*time.Second); err != nil {
			return err
		}
		without, err := readHubMemory(ctx, hut)
		if err != nil {
			return err
		}
		per := func(a, b int64) string { return fmt.Sprintf("%.1f KiB", float64(a-b)/float64(count)/1024) }
		row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: live heap after GC", count), per(withTunnels.heap, without.heap), "< 50 KiB")
		row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: goroutine stacks", count), per(withTunnels.stacks, without.stacks),
			fmt.Sprintf("%.1f goroutines each", float64(withTunnels.goroutines-without.goroutines)/float64(count)))
		row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: heap + stacks", count), per(withTunnels.heap+withTunnels.stacks, without.heap+without.stacks), "< 50 KiB")
		row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: RSS (noisy)", count), per(withTunnels.rss, without.rss), "")
	}
	// The latency and LIST figures go through the first cluster's tunnel.
	closeFirst, err := open(1)
	if err != nil {
		return err
	}
	defer func() { _ = closeFirst() }()

	// Latency and throughput through the first cluster's tunnel, as the
	// hub's admin, against the same requests straight to the spoke (as
	// the spoke's admin).
	hubAdmin, err := clientcmd.BuildConfigFromFlags("", procs.hub.Kubeconfig)
	if err != nil {
		return err
	}
	if err := grantHubAdminsOn(ctx, spoke); err != nil {
		return err
	}
	through := rest.CopyConfig(hubAdmin)
	through.Host = strings.TrimSuffix(hubAdmin.Host, "/") + tunnel.ProxyPath(names[0])
	through.QPS, through.Burst = -1, 0
	direct := rest.CopyConfig(spokeCfg)
	direct.QPS, direct.Burst = -1, 0
	viaHub, straight := kubernetes.NewForConfigOrDie(through), kubernetes.NewForConfigOrDie(direct)
	get := func(c kubernetes.Interface) error {
		_, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err
	}
	getVersion := func(c kubernetes.Interface) error {
		_, err := c.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
		return err
	}
	// What a GET through the hub is made of: the hub's own request
	// handling (a GET of /version, which passes the hub's filters,
	// authentication and authorization as the door does, and reads no
	// storage), and the spoke's with the impersonation the agent asks
	// for (which the spoke authorizes).
	ownCfg := rest.CopyConfig(hubAdmin)
	ownCfg.QPS, ownCfg.Burst = -1, 0
	onHub := kubernetes.NewForConfigOrDie(ownCfg)
	impersonating := rest.CopyConfig(direct)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: "flotilla:bench-admin", Groups: []string{"flotilla:system:masters", "flotilla:system:authenticated"}}
	asAgent := kubernetes.NewForConfigOrDie(impersonating)
	kinds := []struct {
		what string
		cs   kubernetes.Interface
		get  func(kubernetes.Interface) error
	}{
		{"GET through the hub", viaHub, get},
		{"GET straight to the spoke", straight, get},
		{"  GET /version of the hub (its filters' share)", onHub, getVersion},
		{"  GET straight to the spoke, impersonating as the agent does", asAgent, get},
	}
	// The kinds take turns, request by request, so that the load of the
	// shared machine falls on all of them alike.
	times := make([][]time.Duration, len(kinds))
	for i := range *proxyRequests + 20 {
		for k, kind := range kinds {
			start := time.Now()
			if err := kind.get(kind.cs); err != nil {
				return fmt.Errorf("%s: %w", kind.what, err)
			}
			if i >= 20 { // the first requests open connections
				times[k] = append(times[k], time.Since(start))
			}
		}
	}
	for k, kind := range kinds {
		row(kind.what+", p50 / p99", fmt.Sprintf("%s / %s", msText(percentile(times[k], 50)), msText(percentile(times[k], 99))), "")
	}
	hp50, dp50 := percentile(times[0], 50), percentile(times[1], 50)
	row("GET through the hub / straight, p50", fmt.Sprintf("%.2f×", float64(hp50)/float64(dp50)), "≤ 1.5×")
	// The spoke's admin is in system:masters, which the spoke's RBAC
	// never evaluates; a hub user through the hub is evaluated there.
	row("GET through the hub / straight as the same spoke user, p50", fmt.Sprintf("%.2f×", float64(hp50)/float64(percentile(times[3], 50))), "")
	row("  through the hub − hub's own − spoke impersonated, p50 (the tunnel's hops)", msText(hp50-percentile(times[2], 50)-percentile(times[3], 50)), "")
	if *fleetPprof != "" {
		// A CPU profile of the hub while GETs go through it.
		profiled, stopGets := context.WithCancel(ctx)
		go func() {
			for profiled.Err() == nil {
				_ = get(viaHub)
			}
		}()
		err := hut.profile(ctx, *fleetPprof, 10*time.Second, true)
		stopGets()
		if err != nil {
			return err
		}
	}

	const objects, size = 2000, 4096
	ns := "proxy-bench"
	if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	payload := strings.Repeat("x", size)
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"v": payload}}
		if _, err := spoke.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	// The spoke gzips a large response for a client that accepts it
	// (client-go does by default): 8.5 MiB of JSON crosses the tunnel as
	// about 0.1 MiB. So the LIST is timed both ways, each kind taking
	// turns as the GETs above do.
	uncompressed := func(cfg *rest.Config) kubernetes.Interface {
		c := rest.CopyConfig(cfg)
		c.DisableCompression = true
		return kubernetes.NewForConfigOrDie(c)
	}
	lists := []struct {
		what string
		cs   kubernetes.Interface
	}{
		{"through the hub, gzip", viaHub},
		{"straight to the spoke, gzip", straight},
		{"through the hub, uncompressed", uncompressed(through)},
		{"straight to the spoke, uncompressed", uncompressed(direct)},
	}
	const listRounds = 10
	listTimes := make([][]time.Duration, len(lists))
	var listBytes int
	for range listRounds {
		for k, l := range lists {
			start := time.Now()
			raw, err := l.cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").DoRaw(ctx)
			if err != nil {
				return fmt.Errorf("LIST %s: %w", l.what, err)
			}
			listTimes[k] = append(listTimes[k], time.Since(start))
			listBytes = len(raw)
		}
	}
	for k, l := range lists {
		p50 := percentile(listTimes[k], 50)
		row(fmt.Sprintf("LIST of %d ConfigMaps (%.1f MiB) %s, p50 of %d", objects, float64(listBytes)/(1<<20), l.what, listRounds),
			fmt.Sprintf("%s (%.0f MiB/s)", msText(p50), float64(listBytes)/(1<<20)/p50.Seconds()), "")
	}
	return nil
}

// hubMemory is what the hub process holds: live heap after a GC, the
// goroutines' stacks and how many, and RSS.
type hubMemory struct {
	heap, stacks, rss int64
	goroutines        int
}

func readHubMemory(ctx context.Context, h *hubUnderTest) (hubMemory, error) {
	var m hubMemory
	var err error
	if m.heap, err = h.liveHeap(ctx); err != nil {
		return m, err
	}
	base, err := pprofBase(h.pprofDirs[0])
	if err != nil {
		return m, err
	}
	// The heap profile's debug=1 text ends with the runtime's MemStats.
	r, err := get(ctx, base+"heap?debug=1")
	if err != nil {
		return m, err
	}
	body, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return m, err
	}
	if _, after, ok := strings.Cut(string(body), "\n# Stack = "); ok {
		m.stacks, _ = strconv.ParseInt(strings.Fields(after)[0], 10, 64)
	}
	if r, err = get(ctx, base+"goroutine?debug=1"); err != nil {
		return m, err
	}
	body, err = io.ReadAll(r)
	r.Close()
	if err != nil {
		return m, err
	}
	if _, after, ok := strings.Cut(string(body), "goroutine profile: total "); ok {
		m.goroutines, _ = strconv.Atoi(strings.Fields(after)[0])
	}
	m.rss, err = h.rss()
	return m, err
}

func tunnelCounts(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &n); err != nil || n < 1 {
			return nil, fmt.Errorf("-proxy-tunnels %q: want positive numbers, e.g. 100,1000", s)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return counts, nil
}

// agentHubConfig is the hub configuration that the agent of cluster
// stored on the spoke (its client certificate).
func agentHubConfig(ctx context.Context, spoke kubernetes.Interface, cluster, hubURL string) (*rest.Config, error) {
	s, err := spoke.CoreV1().Secrets("agent-"+cluster).Get(ctx, agent.HubKubeconfigSecretName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the hub credentials of cluster %s: %w", cluster, err)
	}
	kc, err := clientcmd.Load(s.Data["kubeconfig"])
	if err != nil {
		return nil, err
	}
	var ca []byte
	for _, c := range kc.Clusters {
		ca = c.CertificateAuthorityData
	}
	return &rest.Config{Host: hubURL, TLSClientConfig: rest.TLSClientConfig{CAData: ca, CertData: s.Data["tls.crt"], KeyData: s.Data["tls.key"]}}, nil
}

// grantHubAdminsOn lets the hub's admins (flotilla:system:masters through
// the proxy) read the spoke, as flotilla dev up does.
func grantHubAdminsOn(ctx context.Context, spoke kubernetes.Interface) error {
	_, err := spoke.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla:bench-hub-admins"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "flotilla:system:masters"}},
	}, metav1.CreateOptions{})
	return client.IgnoreAlreadyExists(err)
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func msText(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms(d)) }
