package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/devcluster"
)

var _ = Describe("Dev clusters", func() {
	It("run Deployments and Jobs on kwok nodes of the capacity and labels asked for, two side by side in one process, and keep their objects across a restart", func(ctx SpecContext) {
		optsA := devClusterOptions("alpha", 3, "8", "32Gi", "us-east-1", "us-east-1a", "us-east-1b")
		optsB := devClusterOptions("beta", 1, "2", "4Gi", "eu-west-1", "eu-west-1a")
		a := startDevCluster(ctx, optsA)
		b := startDevCluster(ctx, optsB)

		By("giving each node the capacity and labels asked for, and making it Ready")
		expectDevNodes(ctx, a.kube, optsA, []string{"us-east-1a", "us-east-1b", "us-east-1a"})
		expectDevNodes(ctx, b.kube, optsB, []string{"eu-west-1a"})

		By("making a Deployment Available in each cluster")
		for _, c := range []*runningDevCluster{a, b} {
			Expect(c.kube.AppsV1().Deployments("default").Create(ctx, devWebDeployment(1), metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
		}
		for _, c := range []*runningDevCluster{a, b} {
			expectDevWebAvailable(ctx, c.kube)
			pods, err := c.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			Expect(err).NotTo(HaveOccurred())
			Expect(pods.Items).To(HaveLen(1))
			Expect(pods.Items[0].Spec.NodeName).To(HavePrefix(c.opts.Name + "-node-"))
			Expect(pods.Items[0].Status.Phase).To(Equal(corev1.PodRunning))
			Expect(pods.Items[0].Status.PodIP).NotTo(BeEmpty())
		}

		By("completing a Job")
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: "default"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "once", Image: "busybox"}},
			}}},
		}
		Expect(a.kube.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			got, err := a.kube.BatchV1().Jobs("default").Get(ctx, "once", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Status.Succeeded).To(BeEquivalentTo(1))
		}).WithContext(ctx).Should(Succeed())

		By("restarting with fewer, relabelled nodes: the Deployment stays, the nodes follow the new options")
		a.Stop()
		optsA = devClusterOptions("alpha", 2, "16", "64Gi", "us-west-2", "us-west-2c")
		optsA.DataDir = a.opts.DataDir
		a = startDevCluster(ctx, optsA)
		expectDevNodes(ctx, a.kube, optsA, []string{"us-west-2c", "us-west-2c"})
		Expect(a.kube.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})).Error().NotTo(HaveOccurred())
	})
})

// runningDevCluster is a dev cluster started by a spec.
type runningDevCluster struct {
	*devcluster.Cluster
	opts devcluster.Options
	kube kubernetes.Interface
}

// devClusterOptions are the options of a dev cluster in a new directory.
func devClusterOptions(name string, nodes int, cpu, memory, region string, zones ...string) devcluster.Options {
	o := devcluster.DefaultOptions()
	o.Name, o.Nodes, o.Region, o.Zones = name, nodes, region, zones
	o.NodeCPU, o.NodeMemory = resource.MustParse(cpu), resource.MustParse(memory)
	o.DataDir = GinkgoT().TempDir()
	return o
}

// startDevCluster starts a dev cluster in this process, stopped when the spec ends.
func startDevCluster(ctx context.Context, o devcluster.Options) *runningDevCluster {
	GinkgoHelper()
	c, err := devcluster.Start(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Stop)
	kube, err := kubernetes.NewForConfig(c.Config)
	Expect(err).NotTo(HaveOccurred())
	return &runningDevCluster{Cluster: c, opts: o, kube: kube}
}

// expectDevNodes checks the simulated nodes: their number, zones, capacity,
// region, and that they are Ready and schedulable.
func expectDevNodes(ctx context.Context, kube kubernetes.Interface, o devcluster.Options, zones []string) {
	GinkgoHelper()
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labels.Set{devcluster.NodeLabel: "true"}.String()})
	Expect(err).NotTo(HaveOccurred())
	Expect(nodes.Items).To(HaveLen(o.Nodes))
	var gotZones []string
	for _, n := range nodes.Items {
		gotZones = append(gotZones, n.Labels[corev1.LabelTopologyZone])
		Expect(n.Labels).To(HaveKeyWithValue(corev1.LabelTopologyRegion, o.Region), n.Name)
		for _, rl := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			Expect(rl.Cpu().Cmp(o.NodeCPU)).To(BeZero(), "%s cpu %s", n.Name, rl.Cpu())
			Expect(rl.Memory().Cmp(o.NodeMemory)).To(BeZero(), "%s memory %s", n.Name, rl.Memory())
		}
		Expect(n.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))), n.Name)
		Expect(n.Spec.Taints).NotTo(ContainElement(HaveField("Key", corev1.TaintNodeNotReady)), n.Name)
	}
	Expect(gotZones).To(ConsistOf(zones))
}

// devWebDeployment is a Deployment asking for a share of a node.
func devWebDeployment(replicas int32) *appsv1.Deployment {
	l := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi"),
					}},
				}}},
			},
		},
	}
}

// expectDevWebAvailable waits until Deployment default/web is Available.
func expectDevWebAvailable(ctx context.Context, kube kubernetes.Interface) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		d, err := kube.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d.Status.Conditions).To(ContainElement(And(
			HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
		g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1))
	}).WithContext(ctx).Should(Succeed())
}
