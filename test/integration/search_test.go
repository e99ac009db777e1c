package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	hubsearch "github.com/flotilla-io/flotilla/hub/search"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/sqlite"
	"github.com/flotilla-io/flotilla/internal/search"
	"github.com/flotilla-io/flotilla/test/framework"
)

// switchable is a store whose database can be made unreachable, for the
// embedded index, which has no server to stop: its methods then fail as
// a store's do when its database does not answer.
type switchable struct {
	store.Store
	down atomic.Bool
}

func (s *switchable) Apply(ctx context.Context, c string, up []searchv1alpha1.Object, del []searchv1alpha1.ObjectRef) error {
	if s.down.Load() {
		return fmt.Errorf("apply: %w", store.ErrUnavailable)
	}
	return s.Store.Apply(ctx, c, up, del)
}

func (s *switchable) Versions(ctx context.Context, c string, gr schema.GroupResource) (map[types.UID]string, error) {
	if s.down.Load() {
		return nil, fmt.Errorf("versions: %w", store.ErrUnavailable)
	}
	return s.Store.Versions(ctx, c, gr)
}

var sqliteBackend = func() searchBackend {
	var current *switchable
	return searchBackend{
		name: "the embedded SQLite index",
		open: func(ctx context.Context) store.Store {
			GinkgoHelper()
			dir, err := os.MkdirTemp("", "flotilla-search-")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(os.RemoveAll, dir)
			s, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(s.Close)
			current = &switchable{Store: s}
			return current
		},
		outage: func(context.Context) func() {
			current.down.Store(true)
			return func() { current.down.Store(false) }
		},
	}
}()

var _ = Describe("Search index (embedded SQLite)", Ordered, func() { searchSpecs(sqliteBackend) })

// searchSpecs are the search specs over one store: a real agent on a real
// spoke indexes into a real hub's endpoint, whose rows the spec reads
// from the store.
func searchSpecs(backend searchBackend) {
	var (
		env       *agentEnv
		opts      agent.Options
		running   *runningAgent
		cluster   string
		index     *countingStore
		log       = &ingestLog{}
		ns        = "shop"
		secretVal = "s3cr3t-value-" + fmt.Sprint(time.Now().UnixNano())
		secretKey = "password-key-never-indexed"
		cmVal     = "configmap-value-never-indexed"
	)
	query := func(ctx context.Context, q store.Query) []searchv1alpha1.SearchItem {
		GinkgoHelper()
		q.Clusters = []string{cluster}
		page, err := index.Query(ctx, q)
		Expect(err).NotTo(HaveOccurred())
		return page.Items
	}
	names := func(ctx context.Context, q store.Query) func() []string {
		return func() []string {
			var out []string
			for _, it := range query(ctx, q) {
				// The spoke's controllers publish their CA into every namespace.
				if it.Name != "kube-root-ca.crt" {
					out = append(out, it.Kind+"/"+it.Name)
				}
			}
			return out
		}
	}

	BeforeAll(func(ctx SpecContext) {
		By("opening " + backend.name + " with rows of a cluster the hub no longer has")
		base := backend.open(ctx)
		Expect(base.Apply(ctx, "gone-cluster", []searchv1alpha1.Object{{Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "x", Name: "left", UID: "gone-1", ResourceVersion: "1"}}, nil)).To(Succeed())
		index = newCountingStore(base)

		By("starting a hub that serves search over it")
		sharedHub := hubCP
		h, err := framework.StartHub(ctx, withSearch(hubsearch.New(index, hubsearch.Options{}), log))
		Expect(err).NotTo(HaveOccurred())
		hubCP = h
		DeferCleanup(func() { hubCP.Stop(); hubCP = sharedHub })

		By("joining a spoke whose agent indexes it")
		env = newAgentEnv(ctx)
		cluster = newClusterName("search")
		opts = env.options(cluster)
		opts.Search = true
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		running = startAgentUnmanaged(opts)
		DeferCleanup(func() { running.stop() })
		acceptAgent(ctx, cluster)
		deleteClusterAfterSpec(cluster)

		By("creating objects on the spoke")
		spoke := env.spoke.Kube
		_, err = spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = spoke.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/shop/web:1.4"}}},
				},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = spoke.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/shop/web:1.4"}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = spoke.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": secretVal}},
			Data:       map[string][]byte{secretKey: []byte(secretVal)},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = spoke.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings"},
			Data:       map[string]string{"color": cmVal},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
	})

	It("indexes the spoke's objects in their compact form", func(ctx SpecContext) {
		Eventually(names(ctx, store.Query{Namespaces: []string{ns}}), "30s").Should(ConsistOf(
			"Deployment/web", "Pod/web-1", "Secret/db", "ConfigMap/settings"))
		pods := query(ctx, store.Query{Kinds: []string{"Pod"}, Namespaces: []string{ns}})
		Expect(pods).To(HaveLen(1))
		Expect(pods[0].Images).To(Equal([]string{"registry.example/shop/web:1.4"}))
		Expect(pods[0].Status).To(Equal("Pending"))
		Expect(query(ctx, store.Query{Images: []string{"shop/web"}})).To(HaveLen(2), "the Deployment's pod template and the Pod")
		Expect(names(ctx, store.Query{Kinds: []string{"Namespace"}, Names: []string{ns}})()).To(ConsistOf("Namespace/" + ns))

		By("a change on the spoke being searchable within moments")
		pod, err := env.spoke.Kube.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		pod.Status.Phase = corev1.PodRunning
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Image: "registry.example/shop/web:1.4",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		_, err = env.spoke.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(names(ctx, store.Query{Statuses: []string{"CrashLoopBackOff"}}), "5s", "50ms").Should(ConsistOf("Pod/web-1"))

		By("the cleanup having swept the rows of the cluster the hub does not have")
		Eventually(func() map[string]int64 {
			c, err := index.Clusters(ctx)
			Expect(err).NotTo(HaveOccurred())
			return c
		}).ShouldNot(HaveKey("gone-cluster"))
	})

	It("sends no Secret's or ConfigMap's data, not even their keys", func(ctx SpecContext) {
		secrets := query(ctx, store.Query{Kinds: []string{"Secret"}, Names: []string{"db"}})
		Expect(secrets).To(HaveLen(1))
		Expect(secrets[0].Labels).To(Equal(map[string]string{"app": "web"}))
		bodies := log.all()
		Expect(bodies).NotTo(BeEmpty())
		for _, forbidden := range []string{secretVal, base64.StdEncoding.EncodeToString([]byte(secretVal)), secretKey, cmVal} {
			for i, b := range bodies {
				Expect(bytes.Contains(b, []byte(forbidden))).To(BeFalse(), "ingest request %d holds %q", i, forbidden)
			}
		}
	})

	It("deletes what the spoke deletes", func(ctx SpecContext) {
		Expect(env.spoke.Kube.CoreV1().Pods(ns).Delete(ctx, "web-1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})).To(Succeed())
		Eventually(names(ctx, store.Query{Kinds: []string{"Pod"}, Namespaces: []string{ns}}), "10s", "50ms").Should(BeEmpty())
	})

	It("sends after a restart only what changed while the agent was stopped", func(ctx SpecContext) {
		running.stop()
		before := index.upsertsIn(ns)()
		spoke := env.spoke.Kube
		By("changing one object, creating one and deleting one while the agent is stopped")
		d, err := spoke.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		d.Labels["tier"] = "back"
		_, err = spoke.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = spoke.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(spoke.CoreV1().ConfigMaps(ns).Delete(ctx, "settings", metav1.DeleteOptions{})).To(Succeed())

		running = startAgentUnmanaged(opts)
		Eventually(names(ctx, store.Query{Namespaces: []string{ns}}), "30s").Should(ConsistOf("Deployment/web", "Secret/db", "ConfigMap/new"))
		Eventually(func() map[string]string {
			return query(ctx, store.Query{Kinds: []string{"Deployment"}, Names: []string{"web"}})[0].Labels
		}).Should(HaveKeyWithValue("tier", "back"))
		Eventually(index.upsertsIn(ns)).Should(Equal(before + 2))
		Consistently(index.upsertsIn(ns), "2s").Should(Equal(before+2), "the restarted agent sent an object the hub held at its version")
	})

	It("refuses a cluster's agent writing another cluster's rows", func(ctx SpecContext) {
		data := env.hubSecret(ctx, opts.Namespace)
		cfg := hubCP.ConfigFor(data["tls.crt"], data["tls.key"], "")
		c, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		other := newClusterName("search-other")
		body := fmt.Sprintf(`{"seq":1,"upserts":[{"version":"v1","resource":"pods","kind":"Pod","namespace":"x","name":"forged","uid":"forged-1","resourceVersion":"1"}]}`)
		resp, err := c.Post(hubCP.URL+search.ChangesPath(other), "application/json", strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		msg := new(bytes.Buffer)
		_, _ = msg.ReadFrom(resp.Body)
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden), msg.String())
		Expect(msg.String()).To(ContainSubstring("only the agent of cluster " + other + " may write its search index rows"))
		clusters, err := index.Clusters(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(clusters).NotTo(HaveKey(other))

		By("its own cluster's ingest answering the same credentials")
		resp, err = c.Get(hubCP.URL + search.VersionsPath(cluster) + "?resource=pods")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})

	It("answers 503 while the database is away, serves the rest of the hub, and catches up after", func(ctx SpecContext) {
		restore := backend.outage(ctx)
		restored := false
		DeferCleanup(func() {
			if !restored {
				restore()
			}
		})
		unavailable := log.answered(http.StatusServiceUnavailable)()
		_, err := env.spoke.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "during-outage"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(log.answered(http.StatusServiceUnavailable), "20s").Should(BeNumerically(">", unavailable))
		var clusters clusterv1.ManagedClusterList
		Expect(hubCP.Client.List(ctx, &clusters)).To(Succeed(), "the hub serves everything else")

		restore()
		restored = true
		Eventually(names(ctx, store.Query{Kinds: []string{"ConfigMap"}, Names: []string{"during-outage"}}), "30s").Should(ConsistOf("ConfigMap/during-outage"))
	})

	It("deletes a deleted cluster's rows", func(ctx SpecContext) {
		running.stop()
		Expect(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}})).To(Succeed())
		Eventually(func() map[string]int64 {
			c, err := index.Clusters(ctx)
			Expect(err).NotTo(HaveOccurred())
			return c
		}, "60s").ShouldNot(HaveKey(cluster))
	})
}
