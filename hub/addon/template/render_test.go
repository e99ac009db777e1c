package template

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

func raw(t *testing.T, obj any) workv1.Manifest {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: b}}
}

func deployment(ns, name string, args ...string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{
					"containers":     []any{map[string]any{"name": "agent", "image": "quay.io/org/hello:v1", "args": args}},
					"initContainers": []any{map[string]any{"name": "init", "image": "quay.io/org/init:v1"}},
					"nodeSelector":   map[string]any{"old": "x"},
					"tolerations":    []any{map[string]any{"key": "old", "operator": "Exists"}},
				},
			},
		},
	}
}

func tmpl(t *testing.T, regs []addonv1alpha1.RegistrationSpec, objs ...any) *addonv1alpha1.AddOnTemplate {
	t.Helper()
	tp := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hello-0.1.0"}, Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: "hello", Registration: regs}}
	for _, o := range objs {
		tp.Spec.AgentSpec.Workload.Manifests = append(tp.Spec.AgentSpec.Workload.Manifests, raw(t, o))
	}
	return tp
}

var kubeClient = []addonv1alpha1.RegistrationSpec{{Type: "KubeClient"}}

// pod is the pod spec of rendered Deployment or DaemonSet u.
func pod(t *testing.T, u *unstructured.Unstructured) *corev1.PodSpec {
	t.Helper()
	m, _, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
	p := &corev1.PodSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(p *corev1.PodSpec) map[string]string {
	out := map[string]string{}
	for _, e := range p.Containers[0].Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestRenderVariables(t *testing.T) {
	cfg := &addonv1alpha1.AddOnDeploymentConfigSpec{CustomizedVariables: []addonv1alpha1.CustomizedVariable{
		{Name: "LOG_LEVEL", Value: "4"}, {Name: "CLUSTER_NAME", Value: "overridden"}, {Name: "HUB_KUBECONFIG", Value: "/mine"},
	}}
	cases := []struct {
		name     string
		regs     []addonv1alpha1.RegistrationSpec
		config   *addonv1alpha1.AddOnDeploymentConfigSpec
		wantArgs []string
		wantEnv  map[string]string
	}{{
		name:     "no config, a registration: HUB_KUBECONFIG and CLUSTER_NAME; unknown names become empty",
		regs:     kubeClient,
		wantArgs: []string{"--cluster-name=c1", "--hub-kubeconfig=/managed/hub-kubeconfig/kubeconfig", "--level=", "--ns="},
		wantEnv:  map[string]string{"HUB_KUBECONFIG": HubKubeconfigPath, "CLUSTER_NAME": "c1"},
	}, {
		name:     "no registration: no HUB_KUBECONFIG",
		wantArgs: []string{"--cluster-name=c1", "--hub-kubeconfig=", "--level=", "--ns="},
		wantEnv:  map[string]string{"CLUSTER_NAME": "c1"},
	}, {
		name: "customized variables override HUB_KUBECONFIG, not CLUSTER_NAME; the config's namespace sets INSTALL_NAMESPACE",
		regs: kubeClient, config: func() *addonv1alpha1.AddOnDeploymentConfigSpec {
			c := *cfg
			c.AgentInstallNamespace = "moved"
			return &c
		}(),
		wantArgs: []string{"--cluster-name=c1", "--hub-kubeconfig=/mine", "--level=4", "--ns=moved"},
		wantEnv:  map[string]string{"HUB_KUBECONFIG": "/mine", "CLUSTER_NAME": "c1", "INSTALL_NAMESPACE": "moved"},
	}, {
		name: "an empty agentInstallNamespace keeps the template's and sets no INSTALL_NAMESPACE",
		regs: kubeClient, config: cfg,
		wantArgs: []string{"--cluster-name=c1", "--hub-kubeconfig=/mine", "--level=4", "--ns="},
		wantEnv:  map[string]string{"HUB_KUBECONFIG": "/mine", "CLUSTER_NAME": "c1"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp := tmpl(t, tc.regs, deployment("open-cluster-management-agent-addon", "hello-agent",
				"--cluster-name={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}", "--level={{LOG_LEVEL}}", "--ns={{INSTALL_NAMESPACE}}"))
			objs, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tp, config: tc.config, namespace: addon.DefaultInstallNamespace})
			if err != nil {
				t.Fatal(err)
			}
			p := pod(t, objs[0].obj)
			if diff := cmp.Diff(tc.wantArgs, p.Containers[0].Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEnv, env(p)); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubstituteTakesNamesAsWritten(t *testing.T) {
	got, err := substitute(`a{{ X }}b{{X}}c{{}}d`, map[string]string{"X": "1", " X ": "2"})
	if err != nil || got != "a2b1cd" {
		t.Errorf("substitute = %q, %v", got, err)
	}
	if _, err := substitute(`"{{CLUSTER_NAME"`, nil); err == nil || !strings.Contains(err.Error(), "never closed") {
		t.Errorf("an unclosed variable: err = %v", err)
	}
}

func TestRenderRegistrationVolumes(t *testing.T) {
	regs := []addonv1alpha1.RegistrationSpec{
		{Type: "KubeClient"},
		{Type: "CustomSigner", CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: "example.com/signer.v1"}},
	}
	objs, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tmpl(t, regs, deployment("ns", "d"))})
	if err != nil {
		t.Fatal(err)
	}
	p := pod(t, objs[0].obj)
	wantVolumes := []corev1.Volume{
		{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "hello-hub-kubeconfig"}}},
		{Name: "cert-example-com-signer-v1", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "hello-example.com-signer.v1-client-cert"}}},
	}
	if diff := cmp.Diff(wantVolumes, p.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	wantMounts := []corev1.VolumeMount{
		{Name: "hub-kubeconfig", MountPath: "/managed/hub-kubeconfig"},
		{Name: "cert-example-com-signer-v1", MountPath: "/managed/example.com-signer.v1"},
	}
	if diff := cmp.Diff(wantMounts, p.Containers[0].VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
}

func TestRenderNodePlacement(t *testing.T) {
	tol := []corev1.Toleration{{Key: "new", Operator: corev1.TolerationOpEqual, Value: "v"}}
	cases := []struct {
		name     string
		np       *addonv1alpha1.NodePlacement
		selector map[string]string
		tols     []string
	}{
		{name: "none", selector: map[string]string{"old": "x"}, tols: []string{"old"}},
		{name: "selector and tolerations replaced", np: &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}, Tolerations: tol}, selector: map[string]string{"role": "infra"}, tols: []string{"new"}},
		{name: "a selector without tolerations clears them", np: &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}}, selector: map[string]string{"role": "infra"}},
		{name: "tolerations without a selector change nothing (OCM)", np: &addonv1alpha1.NodePlacement{Tolerations: tol}, selector: map[string]string{"old": "x"}, tols: []string{"old"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &addonv1alpha1.AddOnDeploymentConfigSpec{NodePlacement: tc.np}
			objs, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tmpl(t, nil, deployment("ns", "d")), config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			p := pod(t, objs[0].obj)
			var tols []string
			for _, t := range p.Tolerations {
				tols = append(tols, t.Key)
			}
			if diff := cmp.Diff(tc.selector, p.NodeSelector); diff != "" {
				t.Errorf("nodeSelector (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tols, tols); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMirrorImage(t *testing.T) {
	cfg := []addonv1alpha1.ImageMirror{{Source: "quay.io/org", Mirror: "mirror.local/org"}}
	cluster := []addonv1alpha1.ImageMirror{{Source: "quay.io", Mirror: "cluster.local"}, {Mirror: "flat.local/all"}}
	for _, tc := range []struct {
		image           string
		config, cluster []addonv1alpha1.ImageMirror
		want            string
	}{
		{"quay.io/org/hello:v1", nil, nil, "quay.io/org/hello:v1"},
		{"quay.io/org/hello:v1", cfg, cluster, "mirror.local/org/hello:v1"},
		{"quay.io/other/hello:v1", cfg, cluster, "cluster.local/other/hello:v1"},
		{"docker.io/library/busybox:1", cfg, cluster, "flat.local/all/busybox:1"},
		{"busybox", nil, []addonv1alpha1.ImageMirror{{Mirror: "flat.local"}}, "flat.local/busybox"},
	} {
		if got := mirrorImage(tc.image, tc.config, tc.cluster); got != tc.want {
			t.Errorf("mirrorImage(%s) = %s, want %s", tc.image, got, tc.want)
		}
	}
	// Both container lists are mirrored, from the config and the cluster's annotation.
	mirrors, err := clusterRegistries(map[string]string{addon.ImageRegistriesAnnotation: `{"registries":[{"source":"quay.io/org/init","mirror":"c.local/init"}]}`})
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tmpl(t, nil, deployment("ns", "d")),
		config: &addonv1alpha1.AddOnDeploymentConfigSpec{Registries: cfg[:1]}, clusterRegistries: mirrors})
	if err != nil {
		t.Fatal(err)
	}
	p := pod(t, objs[0].obj)
	if p.Containers[0].Image != "mirror.local/org/hello:v1" || p.InitContainers[0].Image != "mirror.local/org/init:v1" {
		t.Errorf("images = %s, %s", p.Containers[0].Image, p.InitContainers[0].Image)
	}
	if _, err := clusterRegistries(map[string]string{addon.ImageRegistriesAnnotation: `[`}); err == nil {
		t.Error("a malformed annotation was accepted")
	}
}

func TestRenderInstallNamespace(t *testing.T) {
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "open-cluster-management-agent-addon"}}
	crb := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "hello"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "hello"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "hello", "namespace": "open-cluster-management-agent-addon"}, map[string]any{"kind": "Group", "name": "g"}}}
	cr := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "hello"}}
	tp := tmpl(t, nil, ns, deployment("open-cluster-management-agent-addon", "d"), crb, cr)
	for _, tc := range []struct {
		name, config, want string
	}{{"kept without config", "-", "open-cluster-management-agent-addon"}, {"kept with an empty one", "", "open-cluster-management-agent-addon"}, {"moved", "moved", "moved"}} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg *addonv1alpha1.AddOnDeploymentConfigSpec
			if tc.config != "-" {
				cfg = &addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: tc.config}
			}
			objs, got, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tp, config: cfg, namespace: "fallback"})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("install namespace = %s, want %s", got, tc.want)
			}
			subjects, _, _ := unstructured.NestedSlice(objs[2].obj.Object, "subjects")
			if objs[0].obj.GetName() != tc.want || objs[1].obj.GetNamespace() != tc.want ||
				subjects[0].(map[string]any)["namespace"] != tc.want || subjects[1].(map[string]any)["namespace"] != nil || objs[3].obj.GetNamespace() != "" {
				t.Errorf("objects = %v", objs)
			}
		})
	}
	// Without a Deployment or DaemonSet the namespace is the fallback.
	if _, got, _ := renderAll(renderInput{addOn: "hello", template: tmpl(t, nil, cr), namespace: "fallback"}); got != "fallback" {
		t.Errorf("install namespace = %s, want the fallback", got)
	}
}

func TestRenderProxyAndResources(t *testing.T) {
	ds := deployment("ns", "agentd")
	ds["kind"] = "DaemonSet"
	cfg := &addonv1alpha1.AddOnDeploymentConfigSpec{
		ProxyConfig: addonv1alpha1.ProxyConfig{HTTPProxy: "http://p:3128", NoProxy: "10.0.0.0/8", CABundle: []byte("PEM")},
		ResourceRequirements: []addonv1alpha1.ContainerResourceRequirements{
			{ContainerID: "*:*:*", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}},
			{ContainerID: "deployments:hello-*:agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m")}}},
			{ContainerID: "deployments:other:*", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("30m")}}},
		},
	}
	objs, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tmpl(t, nil, deployment("ns", "hello-agent"), ds), config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 || objs[2].obj.GetKind() != "ConfigMap" || objs[2].obj.GetName() != "hello-proxy-ca" || objs[2].obj.GetNamespace() != "ns" {
		t.Fatalf("objects = %v, want the proxy CA ConfigMap last, in the install namespace", objs)
	}
	if data, _, _ := unstructured.NestedString(objs[2].obj.Object, "data", "ca-bundle.crt"); data != "PEM" {
		t.Errorf("CA bundle = %q", data)
	}
	want := map[string]string{"CLUSTER_NAME": "c1", "HTTP_PROXY": "http://p:3128", "http_proxy": "http://p:3128", "NO_PROXY": "10.0.0.0/8", "no_proxy": "10.0.0.0/8", "CA_BUNDLE_FILE_PATH": "/managed/proxy-ca/ca-bundle.crt"}
	for i, cpu := range []string{"20m", "10m"} {
		p := pod(t, objs[i].obj)
		if diff := cmp.Diff(want, env(p)); diff != "" {
			t.Errorf("%s env (-want +got):\n%s", objs[i].obj.GetKind(), diff)
		}
		if got := p.Containers[0].Resources.Requests.Cpu().String(); got != cpu {
			t.Errorf("%s cpu = %s, want %s (the last matching entry)", objs[i].obj.GetKind(), got, cpu)
		}
		if len(p.Volumes) != 1 || p.Volumes[0].ConfigMap == nil || p.Volumes[0].ConfigMap.Name != "hello-proxy-ca" || p.Containers[0].VolumeMounts[0].MountPath != "/managed/proxy-ca" {
			t.Errorf("%s volumes = %v", objs[i].obj.GetKind(), p.Volumes)
		}
	}
}

func TestRenderFailures(t *testing.T) {
	for name, m := range map[string]workv1.Manifest{
		"unclosed variable":   {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"{{CLUSTER_NAME"}}`)}},
		"breaks the JSON":     {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":{{QUOTE}}}}`)}},
		"no kind":             {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","metadata":{"name":"x"}}`)}},
		"no pod template":     {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}`)}},
		"pod template is odd": {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"template":{"spec":{"containers":"no"}}}}`)}},
	} {
		t.Run(name, func(t *testing.T) {
			tp := tmpl(t, nil)
			tp.Spec.AgentSpec.Workload.Manifests = []workv1.Manifest{m}
			if _, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tp}); err == nil || !strings.Contains(err.Error(), "AddOnTemplate hello-0.1.0") {
				t.Errorf("err = %v, want one naming the template", err)
			}
		})
	}
}

func TestBuildWorks(t *testing.T) {
	big := strings.Repeat("x", 150*1024)
	cm := func(name string, annotations map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns", "annotations": annotations}, "data": map[string]any{"d": big}}
	}
	hook := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "cleanup", "namespace": "ns", "labels": map[string]any{addon.PreDeleteHookLabel: ""}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{}}}}}
	tp := tmpl(t, nil, deployment("ns", "hello-agent"), cm("a", nil), cm("b", map[string]any{addon.DeletionOrphanAnnotation: ""}), cm("c", nil), hook)
	tp.Spec.AgentSpec.ManifestConfigs = []workv1.ManifestConfigOption{
		{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "hello-agent", Namespace: "ns"},
			FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "x", Path: ".x"}}}}},
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello", UID: "u1"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{
			{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
				DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"}, SpecHash: "h1"}},
		}}}
	objs, _, err := renderAll(renderInput{addOn: "hello", cluster: "c1", template: tp})
	if err != nil {
		t.Fatal(err)
	}
	deploy, hookWork, err := buildWorks(mca, tp, objs)
	if err != nil {
		t.Fatal(err)
	}
	// 150 KiB each: the Deployment and two ConfigMaps fit 400 KiB, the third opens a work.
	if len(deploy) != 2 || deploy[0].Name != "addon-hello-deploy-0" || deploy[1].Name != "addon-hello-deploy-1" ||
		len(deploy[0].Spec.Workload.Manifests) != 3 || len(deploy[1].Spec.Workload.Manifests) != 1 {
		t.Fatalf("deploy works = %d", len(deploy))
	}
	w := deploy[0]
	if w.Labels[addon.AddOnNameLabel] != "hello" || w.Annotations[addon.ConfigSpecHashAnnotation] != `{"addontemplates.addon.open-cluster-management.io//hello-0.1.0":"h1"}` ||
		w.Annotations[RenderedHashAnnotation] == "" || w.OwnerReferences[0].UID != "u1" || !*w.OwnerReferences[0].Controller {
		t.Errorf("work metadata = %+v", w.ObjectMeta)
	}
	wantConfigs := []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "hello-agent", Namespace: "ns"},
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}, {Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "x", Path: ".x"}}}},
		FeedbackScrapeType: "Poll",
	}}
	if diff := cmp.Diff(wantConfigs, w.Spec.ManifestConfigs); diff != "" {
		t.Errorf("manifestConfigs (-want +got):\n%s", diff)
	}
	wantDelete := &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan, SelectivelyOrphan: &workv1.SelectivelyOrphan{
		OrphaningRules: []workv1.OrphaningRule{{Group: "", Resource: "configmaps", Name: "b", Namespace: "ns"}}}}
	if diff := cmp.Diff(wantDelete, w.Spec.DeleteOption); diff != "" {
		t.Errorf("deleteOption (-want +got):\n%s", diff)
	}
	if deploy[1].Spec.DeleteOption != nil {
		t.Errorf("a work without orphans has deleteOption %+v", deploy[1].Spec.DeleteOption)
	}
	if hookWork == nil || hookWork.Name != "addon-hello-pre-delete" || len(hookWork.Spec.Workload.Manifests) != 1 ||
		hookWork.Spec.ManifestConfigs[0].ResourceIdentifier.Resource != "jobs" {
		t.Errorf("hook work = %+v", hookWork)
	}
	// The same input gives the same hash; another config hash another.
	again, _, _ := buildWorks(mca, tp, objs)
	mca.Status.ConfigReferences[0].DesiredConfig.SpecHash = "h2"
	changed, _, _ := buildWorks(mca, tp, objs)
	if again[0].Annotations[RenderedHashAnnotation] != w.Annotations[RenderedHashAnnotation] || changed[0].Annotations[RenderedHashAnnotation] == w.Annotations[RenderedHashAnnotation] {
		t.Error("the rendered hash does not follow the work")
	}
}

func TestAvailable(t *testing.T) {
	intv := func(name string, v int64) workv1.FeedbackValue {
		return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)}}
	}
	dep := probe{kind: "Deployment", id: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "d", Namespace: "ns"}}
	ds := probe{kind: "DaemonSet", id: workv1.ResourceIdentifier{Group: "apps", Resource: "daemonsets", Name: "s", Namespace: "ns"}}
	work := func(available metav1.ConditionStatus, dvals, svals []workv1.FeedbackValue) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "addon-hello-deploy-0"}}
		if available != "" {
			w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkAvailable, Status: available}}
		}
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{
			{ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Resource: "deployments", Name: "d", Namespace: "ns"}, StatusFeedback: workv1.StatusFeedbackResult{Values: dvals}},
			{ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Resource: "daemonsets", Name: "s", Namespace: "ns"}, StatusFeedback: workv1.StatusFeedbackResult{Values: svals}},
		}
		return w
	}
	ready := []workv1.FeedbackValue{intv("ReadyReplicas", 1), intv("Replicas", 2)}
	dsReady := []workv1.FeedbackValue{intv("NumberReady", 3), intv("DesiredNumberScheduled", 3)}
	cases := []struct {
		name   string
		want   int
		works  []*workv1.ManifestWork
		status metav1.ConditionStatus
		reason string
	}{
		{"no work", 1, nil, metav1.ConditionUnknown, ReasonWorkNotFound},
		{"no Available yet", 1, []*workv1.ManifestWork{work("", ready, dsReady)}, metav1.ConditionUnknown, ReasonWorkNotApplied},
		{"work not available", 1, []*workv1.ManifestWork{work(metav1.ConditionFalse, ready, dsReady)}, metav1.ConditionFalse, ReasonWorkNotApplied},
		{"no feedback yet", 1, []*workv1.ManifestWork{work(metav1.ConditionTrue, nil, dsReady)}, metav1.ConditionUnknown, ReasonNoProbeResult},
		{"no ready replica", 1, []*workv1.ManifestWork{work(metav1.ConditionTrue, []workv1.FeedbackValue{intv("Replicas", 2)}, dsReady)}, metav1.ConditionFalse, ReasonProbeUnavailable},
		{"zero replicas is healthy", 1, []*workv1.ManifestWork{work(metav1.ConditionTrue, []workv1.FeedbackValue{intv("Replicas", 0)}, dsReady)}, metav1.ConditionTrue, ReasonProbeAvailable},
		{"daemonset short", 1, []*workv1.ManifestWork{work(metav1.ConditionTrue, ready, []workv1.FeedbackValue{intv("NumberReady", 2), intv("DesiredNumberScheduled", 3)})}, metav1.ConditionFalse, ReasonProbeUnavailable},
		{"healthy", 1, []*workv1.ManifestWork{work(metav1.ConditionTrue, ready, dsReady)}, metav1.ConditionTrue, ReasonProbeAvailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, msg := available("hello", tc.want, tc.works, []probe{dep, ds})
			if status != tc.status || reason != tc.reason {
				t.Errorf("available = %s %s (%s), want %s %s", status, reason, msg, tc.status, tc.reason)
			}
			if reason == ReasonProbeAvailable && msg != "hello add-on is available." {
				t.Errorf("message = %q", msg)
			}
		})
	}
}

func TestHookCompleted(t *testing.T) {
	str := func(name, v string) workv1.FeedbackValue {
		return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v)}}
	}
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "addon-hello-pre-delete"}}
	w.Spec.Workload.Manifests = make([]workv1.Manifest, 2)
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue}}
	job := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Group: "batch", Kind: "Job", Name: "j"}, StatusFeedback: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{str("JobComplete", "True")}}}
	podc := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Kind: "Pod", Name: "p"}, StatusFeedback: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{str("PodPhase", "Running")}}}
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{job, podc}
	if done, _ := hookCompleted(w, false); done {
		t.Error("a running pod completed the hook")
	}
	w.Status.ResourceStatus.Manifests[1].StatusFeedback.Values[0] = str("PodPhase", "Succeeded")
	if done, why := hookCompleted(w, false); !done {
		t.Errorf("hook not completed: %s", why)
	}
	if done, _ := hookCompleted(w, true); done {
		t.Error("a hook work just written completed")
	}
	w.Status.ResourceStatus.Manifests = w.Status.ResourceStatus.Manifests[:1]
	if done, _ := hookCompleted(w, false); done {
		t.Error("a hook that reported nothing completed")
	}
}
