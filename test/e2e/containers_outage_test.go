package e2e

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// cutOff is how long the agent's container is off the hub's network.
const cutOff = 2 * time.Minute

// catchUpBound is how soon after its container is reconnected the agent
// must have applied every change made on the hub during the cut. The
// HTTP/2 health checks of client-go notice a dead connection within 45 s
// at worst; the agent's watches run over connections it opened during
// the cut, which fail at once while the network is gone, so once it is
// back only their retry backoff stands between the agent and the hub.
const catchUpBound = 30 * time.Second

// settle is how long the spoke is watched after the catch-up for a
// second apply of anything.
const settle = 15 * time.Second

var _ = Describe("An agent container cut off from the hub's network", Label("containers"), func() {
	It("leaves the spoke's workloads untouched during a two-minute cut, then catches up within the stated bound, applying each change once", func(ctx SpecContext) {
		started := time.Now()
		d := requireDocker(ctx)
		f := startContainerFleet(ctx, d, "edge-2", false)
		key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: "default", Name: name} }

		By("delivering three works: one to keep (a ConfigMap and a Deployment), one to change, one to delete")
		works := map[string]*workv1.ManifestWork{
			"keep":   workOf(f.cluster, "keep", configMap("keep", map[string]string{"v": "1"}), webDeploymentObject()),
			"change": workOf(f.cluster, "change", configMap("change", map[string]string{"v": "1"})),
			"remove": workOf(f.cluster, "remove", configMap("remove", map[string]string{"v": "1"})),
		}
		for _, w := range works {
			Expect(f.hubClient.Create(ctx, w)).To(Succeed())
		}
		for name := range works {
			Eventually(func() bool { return workApplied(ctx, f.hubClient, f.cluster, name) }).WithTimeout(time.Minute).Should(BeTrue())
		}
		before := map[string]*corev1.ConfigMap{}
		for _, name := range []string{"keep", "change", "remove"} {
			cm := &corev1.ConfigMap{}
			Expect(f.spokeClient.Get(ctx, key(name), cm)).To(Succeed())
			before[name] = cm
		}
		web := &appsv1.Deployment{}
		Expect(f.spokeClient.Get(ctx, key("web"), web)).To(Succeed())

		// Every write to a ConfigMap in default from now on, as the spoke's
		// API server reports it.
		events := watchConfigMaps(ctx, f.spokeKubeconfig)
		// untouched fails when an object of the spoke changed since the works were applied.
		untouched := func(g Gomega) {
			for name, b := range before {
				cm := &corev1.ConfigMap{}
				g.Expect(f.spokeClient.Get(ctx, key(name), cm)).To(Succeed(), "ConfigMap %s is still there", name)
				g.Expect(cm.UID).To(Equal(b.UID), "ConfigMap %s is the same object", name)
				g.Expect(cm.ResourceVersion).To(Equal(b.ResourceVersion), "ConfigMap %s was not written", name)
			}
			d := &appsv1.Deployment{}
			g.Expect(f.spokeClient.Get(ctx, key("web"), d)).To(Succeed())
			g.Expect(d.UID).To(Equal(web.UID), "the Deployment is the same object")
			g.Expect(d.Generation).To(Equal(web.Generation), "the Deployment's spec was not written")
			g.Expect(f.spokeClient.Get(ctx, key("added"), &corev1.ConfigMap{})).To(Satisfy(apierrors.IsNotFound), "nothing reaches the spoke during the cut")
		}

		By(fmt.Sprintf("cutting the agent's container off the hub's network for %s while works change on the hub", cutOff))
		Expect(f.agent.Disconnect(ctx, f.hubNet)).To(Succeed())
		cut := time.Now()
		Expect(f.hubClient.Create(ctx, workOf(f.cluster, "added", configMap("added", map[string]string{"v": "1"})))).To(Succeed())
		Eventually(func() error {
			w := &workv1.ManifestWork{}
			if err := f.hubClient.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: "change"}, w); err != nil {
				return err
			}
			w.Spec.Workload.Manifests = workOf(f.cluster, "change", configMap("change", map[string]string{"v": "2"})).Spec.Workload.Manifests
			return f.hubClient.Update(ctx, w)
		}).Should(Succeed())
		Expect(f.hubClient.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: f.cluster, Name: "remove"}})).To(Succeed())
		// The cut lasts cutOff; all along, the spoke keeps what it had, and
		// the hub, hearing nothing, marks the cluster Unknown.
		sawUnknown := false
		Consistently(func(g Gomega) {
			untouched(g)
			sawUnknown = sawUnknown || f.available(ctx) == metav1.ConditionUnknown
		}).WithContext(ctx).WithTimeout(cutOff - time.Since(cut)).WithPolling(time.Second).Should(Succeed())
		Expect(sawUnknown).To(BeTrue(), "the hub saw the cut: the cluster went Unknown after 5 leases of %ss", containerLease)
		Expect(events.ofName("keep", "change", "remove", "added")).To(BeEmpty(), "no write on the spoke during the cut")

		By(fmt.Sprintf("reconnecting: within %s the agent creates, updates and deletes what changed", catchUpBound))
		Expect(f.agent.Connect(ctx, f.hubNet, "")).To(Succeed())
		reconnected := time.Now()
		Eventually(func(g Gomega) {
			added := &corev1.ConfigMap{}
			g.Expect(f.spokeClient.Get(ctx, key("added"), added)).To(Succeed())
			changed := &corev1.ConfigMap{}
			g.Expect(f.spokeClient.Get(ctx, key("change"), changed)).To(Succeed())
			g.Expect(changed.Data).To(HaveKeyWithValue("v", "2"))
			g.Expect(f.spokeClient.Get(ctx, key("remove"), &corev1.ConfigMap{})).To(Satisfy(apierrors.IsNotFound))
			g.Expect(workApplied(ctx, f.hubClient, f.cluster, "added")).To(BeTrue())
			g.Expect(workApplied(ctx, f.hubClient, f.cluster, "change")).To(BeTrue())
			g.Expect(f.hubClient.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: "remove"}, &workv1.ManifestWork{})).To(Satisfy(apierrors.IsNotFound), "the deleted work is gone once its objects are")
		}).WithContext(ctx).WithTimeout(catchUpBound).WithPolling(250*time.Millisecond).Should(Succeed(), func() string { return f.agent.Tail(ctx, 40) })
		caughtUp := time.Since(reconnected)
		GinkgoWriter.Printf("caught up %s after reconnecting (bound %s)\n", caughtUp.Round(100*time.Millisecond), catchUpBound)
		Eventually(f.available).WithContext(ctx).WithTimeout(time.Minute).Should(Equal(metav1.ConditionTrue))

		By("nothing applied twice: one write per change, and untouched objects keep UID and resourceVersion")
		Consistently(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(f.spokeClient.Get(ctx, key("keep"), cm)).To(Succeed())
			g.Expect(cm.UID).To(Equal(before["keep"].UID))
			g.Expect(cm.ResourceVersion).To(Equal(before["keep"].ResourceVersion))
			g.Expect(f.spokeClient.Get(ctx, key("change"), cm)).To(Succeed())
			g.Expect(cm.UID).To(Equal(before["change"].UID), "the changed ConfigMap was updated in place, not re-created")
			d := &appsv1.Deployment{}
			g.Expect(f.spokeClient.Get(ctx, key("web"), d)).To(Succeed())
			g.Expect(d.UID).To(Equal(web.UID))
			g.Expect(d.Generation).To(Equal(web.Generation))
		}).WithContext(ctx).WithTimeout(settle).WithPolling(time.Second).Should(Succeed())
		Expect(events.ofName("keep", "change", "remove", "added")).To(Or(
			Equal([]string{"ADDED added", "DELETED remove", "MODIFIED change"}),
			Equal([]string{"ADDED added", "DELETED remove", "DELETING remove", "MODIFIED change"}),
		), "each change on the hub is one write on the spoke (a deletion may first mark the object), whatever their order")
		Expect(events.closed()).To(BeFalse(), "the watch saw the whole spec")
		GinkgoWriter.Printf("container outage spec took %s\n", time.Since(started).Round(time.Second))
	})
})

// configMapEvents records the watch events of ConfigMaps in default.
type configMapEvents struct {
	mu     sync.Mutex
	seen   []string
	ended  bool
	cancel context.CancelFunc
}

// watchConfigMaps watches the spoke's ConfigMaps in default from now until
// the spec ends.
func watchConfigMaps(ctx context.Context, kubeconfig string) *configMapEvents {
	GinkgoHelper()
	kube := devKube(kubeconfig)
	list, err := kube.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	w, err := kube.CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	Expect(err).NotTo(HaveOccurred())
	e := &configMapEvents{cancel: cancel}
	go func() {
		defer GinkgoRecover()
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
				typ := string(ev.Type)
				if ev.Type == watch.Modified && cm.DeletionTimestamp != nil {
					// A deletion that waits for finalizers (foreground
					// propagation) first writes the deletion timestamp.
					typ = "DELETING"
				}
				e.mu.Lock()
				e.seen = append(e.seen, typ+" "+cm.Name)
				e.mu.Unlock()
			}
			if ev.Type == watch.Error {
				break
			}
		}
		e.mu.Lock()
		e.ended = true
		e.mu.Unlock()
	}()
	return e
}

// ofName returns the events of the named ConfigMaps, sorted by kind of event
// then name, so that the order of independent writes does not matter.
func (e *configMapEvents) ofName(names ...string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	for _, s := range e.seen {
		var typ, name string
		fmt.Sscan(s, &typ, &name)
		if want[name] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func (e *configMapEvents) closed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ended
}

// webDeploymentObject is devDeployment with its type set, for a manifest.
func webDeploymentObject() *appsv1.Deployment {
	d := devDeployment()
	d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	return d
}
