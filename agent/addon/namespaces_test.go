package addon

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// TestInstallable: with install namespaces given, an add-on elsewhere is
// refused with the value and flag to change; without, any namespace goes.
func TestInstallable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		namespaces []string
		ns         string
		want       string
	}{
		{"any namespace", nil, "anywhere", ""},
		{"a listed namespace", []string{"open-cluster-management-agent-addon", "submariner"}, "submariner", ""},
		{"another namespace", []string{"open-cluster-management-agent-addon"}, "kube-system", "addons.installNamespaces (flag --addon-install-namespaces)"},
	} {
		r := &runner{Agent: &Agent{cfg: Config{InstallNamespaces: tc.namespaces}}}
		got := r.installable(tc.ns)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) || tc.want != "" && !strings.Contains(got, tc.ns) {
			t.Errorf("%s: installable(%q) = %q, want %q", tc.name, tc.ns, got, tc.want)
		}
	}
}

func mcaIn(cluster, name, ns string) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: ns},
	}
}

func addOnSecret(ns, name, cluster, a string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{addon.ClusterNameLabel: cluster, addon.AddOnNameLabel: a}}}
}

func testRunner(cfg Config, spoke *fake.Clientset, mcas ...*addonv1alpha1.ManagedClusterAddOn) *runner {
	objs := make([]runtime.Object, len(mcas))
	for i, m := range mcas {
		objs[i] = m
	}
	hub := ctrlfake.NewClientBuilder().WithScheme(hubScheme).WithRuntimeObjects(objs...).Build()
	return &runner{Agent: &Agent{cfg: cfg, spoke: spoke}, hub: hub, recorded: map[string]bool{}, swept: map[string]string{}}
}

// TestNamespaces: without install namespaces the agent looks in the
// default one, its own add-ons' (not another cluster's) and those it
// recorded; with them, in those alone.
func TestNamespaces(t *testing.T) {
	ctx := context.Background()
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "agent", Name: RecordConfigMapName}, Data: map[string]string{"was-used": ""}}
	mcas := []*addonv1alpha1.ManagedClusterAddOn{mcaIn("c1", "a", "ns-a"), mcaIn("c1", "b", ""), mcaIn("c2", "x", "ns-other-cluster")}

	r := testRunner(Config{ClusterName: "c1", Namespace: "agent"}, fake.NewClientset(record), mcas...)
	if err := r.loadRecord(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"ns-a", addon.DefaultInstallNamespace, "was-used"}
	if got := r.namespaces(ctx); !slices.Equal(got, want) {
		t.Errorf("namespaces() = %v, want %v", got, want)
	}

	r = testRunner(Config{ClusterName: "c1", Namespace: "agent", InstallNamespaces: []string{"only"}}, fake.NewClientset(record), mcas...)
	if err := r.loadRecord(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.namespaces(ctx); !slices.Equal(got, []string{"only"}) {
		t.Errorf("with install namespaces: namespaces() = %v, want [only]", got)
	}
}

// TestRecord: a namespace is recorded once before its first Secret (the
// default one never), read again by a new runner, and forgotten once it
// holds no Secret and no add-on uses it.
func TestRecord(t *testing.T) {
	ctx := context.Background()
	spoke := fake.NewClientset()
	cfg := Config{ClusterName: "c1", Namespace: "agent"}
	r := testRunner(cfg, spoke, mcaIn("c1", "a", "ns-a"))
	for _, ns := range []string{"ns-a", "ns-gone", addon.DefaultInstallNamespace, "ns-a"} {
		if err := r.record(ctx, ns); err != nil {
			t.Fatalf("record(%s): %v", ns, err)
		}
	}
	cm, err := spoke.CoreV1().ConfigMaps("agent").Get(ctx, RecordConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 2 || !hasKeys(cm.Data, "ns-a", "ns-gone") {
		t.Errorf("record = %v, want ns-a and ns-gone", cm.Data)
	}

	r = testRunner(cfg, spoke, mcaIn("c1", "a", "ns-a"))
	if err := r.loadRecord(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.forgetNamespaces(ctx, []string{"ns-a", "ns-gone", addon.DefaultInstallNamespace}); err != nil {
		t.Fatal(err)
	}
	cm, _ = spoke.CoreV1().ConfigMaps("agent").Get(ctx, RecordConfigMapName, metav1.GetOptions{})
	if len(cm.Data) != 1 || !hasKeys(cm.Data, "ns-a") {
		t.Errorf("after forgetting: record = %v, want ns-a (an add-on's) alone", cm.Data)
	}

	r = testRunner(Config{ClusterName: "c1", Namespace: "agent", InstallNamespaces: []string{"ns-b"}}, spoke)
	if err := r.record(ctx, "ns-b"); err != nil {
		t.Fatal(err)
	}
	cm, _ = spoke.CoreV1().ConfigMaps("agent").Get(ctx, RecordConfigMapName, metav1.GetOptions{})
	if hasKeys(cm.Data, "ns-b") {
		t.Errorf("recorded %v although the install namespaces are given", cm.Data)
	}
}

// TestListSecretsSkipsForbidden: a namespace the agent may not read is
// skipped, the others listed, and never all namespaces at once.
func TestListSecretsSkipsForbidden(t *testing.T) {
	ctx := context.Background()
	spoke := fake.NewClientset(
		addOnSecret("ns-a", "a-hub-kubeconfig", "c1", "a"),
		addOnSecret("elsewhere", "x-hub-kubeconfig", "c1", "x"),
	)
	var listed []string
	spoke.PrependReactor("list", "secrets", func(action clienttesting.Action) (bool, runtime.Object, error) {
		ns := action.GetNamespace()
		listed = append(listed, ns)
		if ns == "ns-denied" || ns == metav1.NamespaceAll {
			return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "", nil)
		}
		return false, nil, nil
	})
	r := testRunner(Config{ClusterName: "c1", Namespace: "agent"}, spoke, mcaIn("c1", "a", "ns-a"), mcaIn("c1", "d", "ns-denied"))
	secrets, empty, err := r.listSecrets(ctx, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) != 1 || secrets[0].Name != "a-hub-kubeconfig" {
		t.Errorf("listed %v, want a-hub-kubeconfig alone", secrets)
	}
	if !slices.Equal(empty, []string{addon.DefaultInstallNamespace}) {
		t.Errorf("empty = %v, want the default namespace", empty)
	}
	if slices.Contains(listed, metav1.NamespaceAll) {
		t.Errorf("listed Secrets cluster-wide: %v", listed)
	}
}

func hasKeys(m map[string]string, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
