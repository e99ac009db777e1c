package integration

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// watchCached says whether the hub's API server keeps a watch cache of
// the work API group's resource, from its watch_cache_capacity metric.
func watchCached(ctx SpecContext, resource string) bool {
	GinkgoHelper()
	body, err := hubCP.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "watch_cache_capacity{") &&
			strings.Contains(line, `group="`+workv1.GroupName+`"`) && strings.Contains(line, `resource="`+resource+`"`) {
			return true
		}
	}
	return false
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

		Expect(watchCached(ctx, "manifestworks")).To(BeFalse(), "ManifestWorks in the watch cache")
		Expect(watchCached(ctx, "manifestworkreplicasets")).To(BeTrue(), "ManifestWorkReplicaSets, of the same group, not in the watch cache")
	})
})
