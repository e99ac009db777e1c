package integration

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// hubWatchCaches are the work API group's resources the hub's API server
// keeps a watch cache of, read by BeforeSuite (see readWatchCaches).
var hubWatchCaches map[string]bool

// readWatchCaches reads the work API group's resources with a watch cache
// from the hub's watch_cache_capacity metric, once the hub has served both
// (the API server makes a custom resource's storage on its first request).
// The API servers of this process share one metrics registry, and a spec's
// plain API server with the work CRDs (a chart's hub) caches ManifestWorks:
// read before any other starts, the metric is the suite hub's alone.
func readWatchCaches(ctx context.Context) map[string]bool {
	GinkgoHelper()
	Expect(hubCP.Client.List(ctx, &workv1.ManifestWorkList{})).To(Succeed())
	Expect(hubCP.Client.List(ctx, &workv1alpha1.ManifestWorkReplicaSetList{})).To(Succeed())
	body, err := hubCP.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	cached := map[string]bool{}
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, "watch_cache_capacity{"); ok && strings.Contains(rest, `group="`+workv1.GroupName+`"`) {
			for _, resource := range []string{"manifestworks", "manifestworkreplicasets"} {
				if strings.Contains(rest, `resource="`+resource+`"`) {
					cached[resource] = true
				}
			}
		}
	}
	return cached
}

var _ = Describe("Work: the hub's storage of ManifestWorks", func() {
	It("keeps no ManifestWork in the API server's watch cache, and a watch of one namespace sees each change of its works and no other", func(ctx SpecContext) {
		c, err := client.NewWithWatch(hubCP.Config, client.Options{Scheme: hubCP.Client.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		ns, other := workNamespace(ctx, hubCP.Client), workNamespace(ctx, hubCP.Client)
		manifest := rawManifest(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "default"},
		})

		var list workv1.ManifestWorkList
		Expect(c.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		w, err := c.Watch(ctx, &workv1.ManifestWorkList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()

		Expect(c.Create(ctx, admissionWork(other, "elsewhere", manifest))).To(Succeed())
		work := admissionWork(ns, "here", manifest)
		Expect(c.Create(ctx, work)).To(Succeed())
		work.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete", LastTransitionTime: metav1.Now()}}
		Expect(c.Status().Update(ctx, work)).To(Succeed())
		Expect(c.Delete(ctx, work)).To(Succeed())

		type seen struct {
			Type    watch.EventType
			Name    string
			Applied bool
		}
		var events []seen
		Eventually(func() []seen {
			for {
				select {
				case ev := <-w.ResultChan():
					got, ok := ev.Object.(*workv1.ManifestWork)
					Expect(ok).To(BeTrue(), "event %s of %T", ev.Type, ev.Object)
					events = append(events, seen{ev.Type, got.Name, len(got.Status.Conditions) > 0})
				default:
					return events
				}
			}
		}).Should(Equal([]seen{{watch.Added, "here", false}, {watch.Modified, "here", true}, {watch.Deleted, "here", true}}))

		Expect(hubWatchCaches).NotTo(HaveKey("manifestworks"), "ManifestWorks in the watch cache")
		Expect(hubWatchCaches).To(HaveKey("manifestworkreplicasets"), "ManifestWorkReplicaSets, of the same group, not in the watch cache")
	})
})
