package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
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
func benchProxy(ctx context.Context, e *env) error {
	quietKlog()
	procs, err := startHubAndSpoke(ctx, e, "proxy")
	if err != nil {
		return err
	}
	defer procs.stop()
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

	// The agents above run no tunnel: open them one count at a time and
	// read the hub's memory between.
	spokeCfg, err := clientcmd.BuildConfigFromFlags("", procs.spoke.Kubeconfig)
	if err != nil {
		return err
	}
	spoke := kubernetes.NewForConfigOrDie(spokeCfg)
	tunnelCtx, stopTunnels := context.WithCancel(ctx)
	defer stopTunnels()
	before, err := procs.hub.RSS()
	if err != nil {
		return err
	}
	opened := 0
	for _, count := range counts {
		for ; opened < count; opened++ {
			hubCfg, err := agentHubConfig(ctx, spoke, names[opened], procs.join.URL)
			if err != nil {
				return err
			}
			go func(name string) {
				_ = agentproxy.Run(tunnelCtx, agentproxy.Config{ClusterName: name, AgentID: "bench", Hub: hubCfg, Spoke: spokeCfg})
			}(names[opened])
		}
		if err := waitAllClusters(ctx, hubClient, names[:count], "TunnelConnected", 10*time.Minute, func(mc *clusterv1.ManagedCluster) bool {
			return meta.IsStatusConditionTrue(mc.Status.Conditions, tunnel.ConditionConnected)
		}); err != nil {
			return err
		}
		after, err := procs.hub.RSS()
		if err != nil {
			return err
		}
		row(fmt.Sprintf("hub RSS per idle tunnel, %d tunnels", count), fmt.Sprintf("%.1f KiB", float64(after-before)/float64(count)/1024), "< 50 KiB")
	}

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
	hubTimes, err := timeN(*proxyRequests, func() error { return get(viaHub) })
	if err != nil {
		return fmt.Errorf("GET through the hub: %w", err)
	}
	directTimes, err := timeN(*proxyRequests, func() error { return get(straight) })
	if err != nil {
		return fmt.Errorf("GET straight to the spoke: %w", err)
	}
	hp50, hp99 := percentile(hubTimes, 50), percentile(hubTimes, 99)
	dp50, dp99 := percentile(directTimes, 50), percentile(directTimes, 99)
	row("GET through the hub, p50 / p99", fmt.Sprintf("%s / %s", msText(hp50), msText(hp99)), "")
	row("GET straight to the spoke, p50 / p99", fmt.Sprintf("%s / %s", msText(dp50), msText(dp99)), "")
	row("GET through the hub / straight, p50", fmt.Sprintf("%.2f×", float64(hp50)/float64(dp50)), "≤ 1.5×")

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
	for _, c := range []struct {
		what string
		cs   kubernetes.Interface
	}{{"through the hub", viaHub}, {"straight to the spoke", straight}} {
		start := time.Now()
		var bytes int
		for range 5 {
			raw, err := c.cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").DoRaw(ctx)
			if err != nil {
				return fmt.Errorf("LIST %s: %w", c.what, err)
			}
			bytes += len(raw)
		}
		took := time.Since(start)
		row(fmt.Sprintf("LIST of %d ConfigMaps (%.1f MiB) %s", objects, float64(bytes)/5/(1<<20), c.what),
			fmt.Sprintf("%.1f MiB/s (%s each)", float64(bytes)/(1<<20)/took.Seconds(), msText(took/5)), "")
	}
	return nil
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

func timeN(n int, f func() error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func msText(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms(d)) }
