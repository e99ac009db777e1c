package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("flotilla dev", func() {
	It("brings up a hub and two clusters that become Available, shows them, and leaves no process and no directory after down", func(ctx SpecContext) {
		dir := filepath.Join(GinkgoT().TempDir(), "dev")
		DeferCleanup(func(ctx context.Context) { runFlotilla(ctx, "dev", "down", "--dir", dir, "--grace", "10s") })

		started := time.Now()
		up := runFlotilla(ctx, "dev", "up", "--clusters", "2", "--dir", dir)
		took := time.Since(started)
		Expect(up.code).To(Equal(0), up.stderr)
		AddReportEntry("flotilla dev up --clusters 2: wall time", took.Round(100*time.Millisecond).String())
		for _, kubeconfig := range []string{"hub", "cluster1", "cluster2"} {
			Expect(up.stdout).To(ContainSubstring("export KUBECONFIG=" + filepath.Join(dir, kubeconfig, "admin.kubeconfig")))
		}

		By("the hub has both clusters Available, with their labels")
		hubClient := devClient(filepath.Join(dir, "hub", "admin.kubeconfig"))
		wantLabels := map[string]map[string]string{
			"cluster1": {"region": "us-east", "env": "prod"},
			"cluster2": {"region": "eu-west", "env": "dev"},
		}
		for name, labels := range wantLabels {
			mc := &clusterv1.ManagedCluster{}
			Expect(hubClient.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
			Expect(meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).To(BeTrue(), "%s: %v", name, mc.Status.Conditions)
			for k, v := range labels {
				Expect(mc.Labels).To(HaveKeyWithValue(k, v), name)
			}
		}

		By("a dev cluster runs a Deployment to Available on its simulated nodes")
		spoke := devKube(filepath.Join(dir, "cluster1", "admin.kubeconfig"))
		nodes, err := spoke.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(nodes.Items).To(HaveLen(3))
		for _, n := range nodes.Items {
			Expect(n.Labels).To(HaveKeyWithValue(corev1.LabelTopologyRegion, "us-east"))
		}
		Expect(spoke.AppsV1().Deployments("default").Create(ctx, devDeployment(), metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			d, err := spoke.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1))
		}).WithContext(ctx).Should(Succeed())

		By("measuring the memory of each dev cluster")
		for _, name := range []string{"cluster1", "cluster2"} {
			pids, err := framework.ProcessesMentioning("--data-dir " + filepath.Join(dir, name) + " ")
			Expect(err).NotTo(HaveOccurred())
			Expect(pids).To(HaveLen(1), name)
			rss, err := framework.RSSOf(pids[0])
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry(fmt.Sprintf("RSS of dev cluster %s", name), fmt.Sprintf("%d MiB", rss>>20))
		}

		By("dev up again on the running environment leaves it as it is")
		again := runFlotilla(ctx, "dev", "up", "--dir", dir)
		Expect(again.code).To(Equal(0), again.stderr)
		Expect(again.stderr).To(ContainSubstring("Every process of the dev environment in " + dir + " runs: nothing to start"))

		By("showing every process running and both clusters joined and available")
		status := runFlotilla(ctx, "dev", "status", "--dir", dir)
		Expect(status.code).To(Equal(0), status.stderr)
		Expect(strings.Count(status.stdout, " running ")).To(Equal(5), status.stdout)
		for _, name := range []string{"cluster1", "cluster2"} {
			Expect(status.stdout).To(MatchRegexp(`(?m)^%s\s+running\s+\d+\s+\d+Mi\s+True\s+True\s`, regexp.QuoteMeta(name)))
		}

		By("the commands up suggests run as printed")
		hint := regexp.MustCompile(`Status: (.+ dev status --dir \S+)\. Stop everything: `).FindStringSubmatch(up.stdout)
		Expect(hint).To(HaveLen(2), up.stdout)
		asPrinted := runPrinted(ctx, hint[1], nil)
		Expect(asPrinted.code).To(Equal(0), asPrinted.stderr)
		Expect(asPrinted.stdout).To(ContainSubstring("Dev environment in " + dir))

		By("status and restart without --dir work on the environment that KUBECONFIG points into, and say so")
		kubeconfigEnv := []string{"KUBECONFIG=" + filepath.Join(dir, "cluster2", "admin.kubeconfig")}
		status = runFlotillaEnv(ctx, kubeconfigEnv, "dev", "status")
		Expect(status.code).To(Equal(0), status.stderr)
		Expect(status.stderr).To(ContainSubstring("Using the dev environment in " + dir + ", which KUBECONFIG points into"))
		Expect(status.stdout).To(ContainSubstring("Dev environment in " + dir + ", up since"))
		before := readSandboxState(dir).Clusters[0].Process.PID
		started = time.Now()
		restart := runFlotillaEnv(ctx, kubeconfigEnv, "dev", "restart", "cluster1")
		AddReportEntry("flotilla dev restart cluster1: wall time", time.Since(started).Round(100*time.Millisecond).String())
		Expect(restart.code).To(Equal(0), restart.stderr)
		Expect(restart.stderr).To(ContainSubstring("Using the dev environment in " + dir + ", which KUBECONFIG points into"))
		Expect(restart.stderr).To(ContainSubstring("Starting cluster1 in " + dir))
		Expect(readSandboxState(dir).Clusters[0].Process.PID).NotTo(Equal(before))
		Expect(restart.stderr).NotTo(ContainSubstring("[+]"), "a failing health check's report, in full")

		By("stopping everything and removing the directory")
		running, err := framework.ProcessesMentioning(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(running).To(HaveLen(5), "the hub, two dev clusters and two agents")
		down := runFlotilla(ctx, "dev", "down", "--dir", dir)
		Expect(down.code).To(Equal(0), down.stderr)
		Expect(framework.ProcessesMentioning(dir)).To(BeEmpty())
		Expect(dir).NotTo(BeAnExistingFile())
	})

	It("stops what it started, shows why and removes its directory when a cluster fails to come up", func(ctx SpecContext) {
		// A flotilla whose flotilla-dev-cluster fails as one on a busy port would.
		bin := GinkgoT().TempDir()
		self, err := os.ReadFile(filepath.Join(*binDir, "flotilla"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(bin, "flotilla"), self, 0o755)).To(Succeed())
		Expect(os.Symlink(filepath.Join(*binDir, "flotilla-hub"), filepath.Join(bin, "flotilla-hub"))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(bin, "flotilla-dev-cluster"), []byte(
			"#!/bin/sh\necho 'flotilla-dev-cluster: cannot listen on 127.0.0.1:7443: address already in use' >&2\nexit 1\n"), 0o755)).To(Succeed())

		dir := filepath.Join(GinkgoT().TempDir(), "dev")
		p, err := framework.StartProcess(ctx, filepath.Join(bin, "flotilla"), "dev", "up", "--clusters", "1", "--dir", dir)
		Expect(err).NotTo(HaveOccurred())
		code, err := p.Wait(2 * time.Minute)
		Expect(err).NotTo(HaveOccurred(), p.Tail(20))
		Expect(code).To(Equal(1), p.Output())
		Expect(p.Output()).To(ContainSubstring("cluster1 stopped"))
		Expect(p.Output()).To(ContainSubstring("address already in use"))
		Expect(framework.ProcessesMentioning(dir)).To(BeEmpty())
		Expect(dir).NotTo(BeAnExistingFile())
	})
})

var _ = Describe("two flotilla dev sandboxes at once", func() {
	It("run side by side, are restored by dev up after pieces of one were killed or restarted by hand, and leave no process and no port after down", func(ctx SpecContext) {
		dirA := filepath.Join(GinkgoT().TempDir(), "a")
		dirB := filepath.Join(GinkgoT().TempDir(), "b")
		for _, dir := range []string{dirA, dirB} {
			DeferCleanup(func(ctx context.Context) { runFlotilla(ctx, "dev", "down", "--dir", dir, "--grace", "10s") })
		}

		By("starting both at once: each server picks its own port")
		ups := make(chan cliRun, 2)
		for _, dir := range []string{dirA, dirB} {
			go func() {
				defer GinkgoRecover()
				ups <- runFlotilla(ctx, "dev", "up", "--clusters", "1", "--dir", dir)
			}()
		}
		for range 2 {
			up := <-ups
			Expect(up.code).To(Equal(0), up.stderr)
		}
		urls := append(sandboxURLs(dirA), sandboxURLs(dirB)...)
		Expect(urls).To(HaveLen(4))
		seen := map[string]bool{}
		for _, u := range urls {
			Expect(seen).NotTo(HaveKey(u), "two servers on one address")
			seen[u] = true
		}

		By("killing the hub and the agent of A: dev up starts them again, A's hub on its port, and leaves B alone")
		st := readSandboxState(dirA)
		bBefore := readSandboxState(dirB)
		for _, pid := range []int{st.Hub.Process.PID, st.Clusters[0].Agent.PID} {
			Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		}
		for _, pid := range []int{st.Hub.Process.PID, st.Clusters[0].Agent.PID} {
			Eventually(processEnded).WithContext(ctx).WithArguments(pid).Should(BeTrue())
		}
		up := runFlotilla(ctx, "dev", "up", "--dir", dirA)
		Expect(up.code).To(Equal(0), up.stderr)
		Expect(up.stderr).To(ContainSubstring("Starting hub, cluster1-agent in " + dirA))
		Expect(up.stderr).NotTo(ContainSubstring("--clusters"))
		after := readSandboxState(dirA)
		Expect(after.Hub.URL).To(Equal(st.Hub.URL))
		Expect(after.Hub.Process.PID).NotTo(Equal(st.Hub.Process.PID))
		Expect(readSandboxState(dirB).Hub.Process.PID).To(Equal(bBefore.Hub.Process.PID))
		// The cluster may still be Available from before, so dev up need
		// not have waited for the new agent to say so.
		Eventually(func() string {
			log, _ := os.ReadFile(filepath.Join(dirA, "cluster1-agent.log"))
			return string(log)
		}).WithContext(ctx).Should(ContainSubstring("The cluster holds hub credentials from its earlier join"))

		By("an agent of A started again by hand is kept by dev up, and recorded")
		Expect(syscall.Kill(after.Clusters[0].Agent.PID, syscall.SIGKILL)).To(Succeed())
		Eventually(processEnded).WithContext(ctx).WithArguments(after.Clusters[0].Agent.PID).Should(BeTrue())
		agentArgs := after.Clusters[0].Agent.Args
		byHand, err := framework.StartProcess(ctx, agentArgs[0], agentArgs[1:]...)
		Expect(err).NotTo(HaveOccurred())
		Eventually(byHand.Output).WithContext(ctx).Should(ContainSubstring("The hub accepted the cluster"))
		up = runFlotilla(ctx, "dev", "up", "--dir", dirA)
		Expect(up.code).To(Equal(0), up.stderr)
		Expect(up.stderr).To(ContainSubstring(fmt.Sprintf("cluster1-agent runs as pid %d", byHand.Pid())))
		Expect(up.stderr).To(ContainSubstring("nothing to start"))
		Expect(readSandboxState(dirA).Clusters[0].Agent.PID).To(Equal(byHand.Pid()))
		Eventually(func() string {
			return runFlotilla(ctx, "get", "clusters", "--kubeconfig", filepath.Join(dirA, "hub", "admin.kubeconfig")).stdout
		}).WithContext(ctx).Should(MatchRegexp(`(?m)^cluster1\s+True\s+True\s+True\s`))

		By("dev restart restarts one piece")
		restart := runFlotilla(ctx, "dev", "restart", "cluster1", "--dir", dirB)
		Expect(restart.code).To(Equal(0), restart.stderr)
		Expect(readSandboxState(dirB).Clusters[0].Process.PID).NotTo(Equal(bBefore.Clusters[0].Process.PID))

		By("dev down stops every process of both, the one started by hand too, and frees every port")
		urls = append(sandboxURLs(dirA), sandboxURLs(dirB)...)
		for _, dir := range []string{dirA, dirB} {
			down := runFlotilla(ctx, "dev", "down", "--dir", dir)
			Expect(down.code).To(Equal(0), down.stderr)
			Expect(framework.ProcessesMentioning(dir + "/")).To(BeEmpty())
			Expect(dir).NotTo(BeAnExistingFile())
		}
		for _, u := range urls {
			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(u, "https://"), time.Second)
			if err == nil {
				conn.Close()
			}
			Expect(err).To(HaveOccurred(), "%s still listens", u)
		}
	})
})

// runFlotillaEnv runs flotilla as runFlotilla does, with env added to
// this process's environment.
func runFlotillaEnv(ctx context.Context, env []string, args ...string) cliRun {
	GinkgoHelper()
	return runCommand(ctx, env, filepath.Join(*binDir, "flotilla"), args...)
}

// runPrinted runs a command line as a message printed it, split at
// spaces, from the current directory, with env added.
func runPrinted(ctx context.Context, line string, env []string) cliRun {
	GinkgoHelper()
	fields := strings.Fields(line)
	return runCommand(ctx, env, fields[0], fields[1:]...)
}

// runCommand runs a program (found on PATH unless it is a path) to its end.
func runCommand(ctx context.Context, env []string, name string, args ...string) cliRun {
	GinkgoHelper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		Fail(fmt.Sprintf("run %s: %v", name, err))
	}
	r := cliRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
	GinkgoWriter.Printf("$ %s %s %s\n%s%s(exit %d)\n", strings.Join(env, " "), name, strings.Join(args, " "), r.stdout, r.stderr, r.code)
	return r
}

// processEnded reports whether a killed process has ended for good: gone,
// or a zombie whose threads have all ended. A process whose main thread
// ended shows as a zombie while its other threads still hold its files
// and ports.
func processEnded(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || !strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z") {
		return false
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return err != nil || len(tasks) <= 1
}

// sandboxState is the part of a sandbox's state.json the specs read.
type sandboxState struct {
	Hub struct {
		URL     string         `json:"url"`
		Process sandboxProcess `json:"process"`
	} `json:"hub"`
	Clusters []struct {
		URL     string         `json:"url"`
		Process sandboxProcess `json:"process"`
		Agent   sandboxProcess `json:"agent"`
	} `json:"clusters"`
}

type sandboxProcess struct {
	PID  int      `json:"pid"`
	Args []string `json:"args"`
}

func readSandboxState(dir string) sandboxState {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	Expect(err).NotTo(HaveOccurred())
	var st sandboxState
	Expect(json.Unmarshal(data, &st)).To(Succeed())
	return st
}

// sandboxURLs are the addresses of a sandbox's servers.
func sandboxURLs(dir string) []string {
	GinkgoHelper()
	st := readSandboxState(dir)
	urls := []string{st.Hub.URL}
	for _, c := range st.Clusters {
		urls = append(urls, c.URL)
	}
	return urls
}

// startSandbox runs `flotilla dev up` with the given number of clusters
// in a directory of the spec's, torn down when the spec ends. It returns
// the directory, a client of the sandbox's hub, and a way to run flotilla
// against that hub.
func startSandbox(ctx SpecContext, clusters int) (dir string, hub client.Client, onHub func(args ...string) cliRun) {
	GinkgoHelper()
	dir = filepath.Join(GinkgoT().TempDir(), "dev")
	DeferCleanup(func(ctx context.Context) { runFlotilla(ctx, "dev", "down", "--dir", dir, "--grace", "10s") })
	up := runFlotilla(ctx, "dev", "up", "--clusters", strconv.Itoa(clusters), "--dir", dir)
	Expect(up.code).To(Equal(0), up.stderr)
	kubeconfig := filepath.Join(dir, "hub", "admin.kubeconfig")
	onHub = func(args ...string) cliRun { return runFlotilla(ctx, append(args, "--kubeconfig", kubeconfig)...) }
	return dir, devClient(kubeconfig), onHub
}

// devClient is a client of the dev hub that knows the OCM types.
func devClient(kubeconfig string) client.Client {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// devKube is a clientset of a dev cluster.
func devKube(kubeconfig string) kubernetes.Interface {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	return kubernetes.NewForConfigOrDie(cfg)
}

// devDeployment is a one-replica Deployment.
func devDeployment() *appsv1.Deployment {
	l := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}
