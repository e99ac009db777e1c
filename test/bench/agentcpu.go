package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	agentPolicies = flag.Int("agent-policies", 50, "agent-cpu: policies the idle agent evaluates")
	agentIdle     = flag.Duration("agent-idle", 10*time.Second, "agent-cpu: how long the idle agent's CPU is measured")
)

// benchAgentCPU joins one cluster with a real flotilla-agent process, binds
// it 50 enforced policies (the example policy, each for a namespace of its
// own), waits until all are Compliant, and reads the agent's CPU time from
// /proc over a period in which nothing changes.
func benchAgentCPU(ctx context.Context, e *env) error {
	procs, err := startHubAndSpoke(ctx, e, "cpu")
	if err != nil {
		return err
	}
	defer procs.stop()
	const cluster = "bench-idle"
	agentProc, err := startAgentProcess(ctx, e, procs, cluster)
	if err != nil {
		return err
	}
	defer agentProc.Stop(time.Minute)
	c, err := adminClient(procs.hub.Kubeconfig)
	if err != nil {
		return err
	}
	if _, err := acceptAll(ctx, procs.hub, c, []string{cluster}); err != nil {
		return fmt.Errorf("%w\nagent output:\n%s", err, agentProc.Tail(20))
	}
	if err := bindIdlePolicies(ctx, e, procs.hub.Kubeconfig); err != nil {
		return err
	}
	if err := waitCompliant(ctx, c, cluster, *agentPolicies); err != nil {
		return fmt.Errorf("%w\nagent output:\n%s", err, agentProc.Tail(20))
	}
	// What follows the first evaluations (events, status writes) settles first.
	cpu, rss, err := idleCost(ctx, []*framework.Process{agentProc}, 10*time.Second, *agentIdle)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("idle agent CPU, %d policies Compliant (%s)", *agentPolicies, *agentIdle),
		fmt.Sprintf("%.2f %%", cpu), "report (of one core)")
	row(fmt.Sprintf("idle agent RSS, %d policies", *agentPolicies), mib(rss), "")
	return nil
}

// startAgentProcess starts a flotilla-agent process for cluster on the
// spoke of procs, bootstrapped against its hub; the caller accepts it.
func startAgentProcess(ctx context.Context, e *env, procs *hubAndSpoke, cluster string) (*framework.Process, error) {
	bootstrap, err := bootstrapKubeconfig(procs.hub.Kubeconfig, procs.join.URL, procs.join.Token, filepath.Join(e.workDir, "cpu-bootstrap.kubeconfig"))
	if err != nil {
		return nil, err
	}
	return framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-agent"), "--kubeconfig", procs.spoke.Kubeconfig,
		"--bootstrap-kubeconfig", bootstrap, "--cluster-name", cluster, "--namespace", "agent-"+cluster,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
}

// bindIdlePolicies binds the global ClusterSet to the policies namespace,
// places everywhere and creates the -agent-policies policies there.
func bindIdlePolicies(ctx context.Context, e *env, hubKubeconfig string) error {
	const ns = "policies"
	file, err := idlePolicies(e.workDir, *agentPolicies)
	if err != nil {
		return err
	}
	kc := "--kubeconfig=" + hubKubeconfig
	for _, args := range [][]string{
		{"clusterset", "bind", "global", kc, "-n", ns},
		{"create", "placement", "everywhere", kc, "-n", ns, "--clustersets", "global", "--wait"},
		{"create", "policy", kc, "-f", file, "-n", ns, "--placement", "everywhere"},
	} {
		if _, err := flotilla(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// waitCompliant waits until want policies of cluster are Compliant.
func waitCompliant(ctx context.Context, c client.Client, cluster string, want int) error {
	var compliant int
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &policyv1.PolicyList{}
		if err := c.List(ctx, list, client.InNamespace(cluster)); err != nil {
			return false, nil
		}
		compliant = 0
		for _, p := range list.Items {
			if p.Status.ComplianceState == policyv1.Compliant {
				compliant++
			}
		}
		return compliant == want, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d policies Compliant on %s: %w", compliant, want, cluster, err)
	}
	return nil
}

// idlePolicies writes n copies of the example policy, each requiring a
// namespace of its own, to one file and returns its path.
func idlePolicies(dir string, n int) (string, error) {
	b, err := os.ReadFile(examplePolicy)
	if err != nil {
		return "", fmt.Errorf("the example policy: %w", err)
	}
	example := string(b)
	if !strings.Contains(example, "name: policy-namespace\n") || !strings.Contains(example, "name: prod\n") {
		return "", fmt.Errorf("%s no longer names policy-namespace and namespace prod: update idlePolicies", examplePolicy)
	}
	docs := make([]string, n)
	for i := range docs {
		d := strings.Replace(example, "name: policy-namespace\n", fmt.Sprintf("name: idle-%02d\n", i), 1)
		d = strings.Replace(d, "name: policy-namespace-example\n", fmt.Sprintf("name: idle-%02d-example\n", i), 1)
		docs[i] = strings.Replace(d, "name: prod\n", fmt.Sprintf("name: idle-%02d\n", i), 1)
	}
	path := filepath.Join(dir, "idle-policies.yaml")
	return path, os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o644)
}
