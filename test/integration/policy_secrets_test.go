package integration

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// The spec of issue 42, item 5: a value read from a Secret, through any
// template function, never reaches the hub, whatever fails; and every
// message the hub gets fits an Event.
var _ = Describe("Policy secrets", func() {
	It("never sends a value of a spoke Secret to the hub, whatever fails, and keeps every message within an Event's limit", func(ctx SpecContext) {
		c := joinPolicyCluster(ctx)
		secret := newSecretValues()
		spoke := c.env.spoke.Client
		Expect(spoke.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "keys"},
			Data:       map[string][]byte{"tls.key": []byte(secret.key), "marker": []byte(secret.marker)},
		})).To(Succeed())
		// A Job's pod template is immutable: an update that changes it is
		// refused with the whole template quoted.
		Expect(spoke.Create(ctx, secretJob("sec-job", corev1.EnvVar{Name: "KEY", Value: "old"}))).To(Succeed())
		Expect(spoke.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sec-copy"},
			Data: map[string]string{"marker": "something else"}})).To(Succeed())

		fromMarker := `{{ fromSecret "default" "keys" "marker" | base64dec }}`
		templates := map[string]map[string]any{
			// An update refused by the API server, which quotes the pod template.
			"sec-update": secretSpec("enforce", "musthave", map[string]any{
				"apiVersion": "batch/v1", "kind": "Job",
				"metadata": map[string]any{"name": "sec-job", "namespace": "default"},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
					"name": "main", "image": "busybox",
					"env": []any{
						map[string]any{"name": "KEY", "value": `{{ fromSecret "default" "keys" "tls.key" | base64dec | printf "%q" }}`},
						map[string]any{"name": "MARKER", "value": fromMarker},
					},
				}}}}},
			}),
			// A create refused by the API server, which quotes the label.
			"sec-create": secretSpec("enforce", "musthave", configMapDefinition("sec-label", map[string]any{"marker": fromMarker + "!"}, nil)),
			// Template errors after reading: functions that quote their argument.
			"sec-fromsecret": secretSpec("inform", "musthave", configMapDefinition("sec-int", nil, map[string]any{
				"n": `{{ fromSecret "default" "keys" "marker" | base64dec | mustToDate "2006-01-02" }}`})),
			"sec-lookup": secretSpec("inform", "musthave", configMapDefinition("sec-bool", nil, map[string]any{
				"b": `{{ (lookup "v1" "Secret" "default" "keys").data.marker | base64dec | mustToDate "2006-01-02" }}`})),
			"sec-lookup-list": secretSpec("inform", "musthave", configMapDefinition("sec-list", nil, map[string]any{
				"n": `{{ range (lookup "v1" "Secret" "default" "").items }}{{ index .data "tls.key" | base64dec | mustToDate "2006-01-02" }}{{ end }}`})),
			"sec-object": secretSpec("inform", "musthave", map[string]any{
				"apiVersion": "v1", "kind": "Secret",
				"metadata": map[string]any{"name": "keys", "namespace": "default",
					"labels": map[string]any{"n": `{{ .Object.data.marker | base64dec | mustToDate "2006-01-02" }}`}},
			}),
			// A mismatch, whose diff would carry the values.
			"sec-mismatch": secretSpec("inform", "mustonlyhave", configMapDefinition("sec-copy", nil, map[string]any{"marker": fromMarker})),
			"sec-secret-mismatch": secretSpec("inform", "mustonlyhave", map[string]any{
				"apiVersion": "v1", "kind": "Secret",
				"metadata": map[string]any{"name": "keys", "namespace": "default"},
				"data":     map[string]any{"marker": base64.StdEncoding.EncodeToString([]byte("not the marker"))},
			}),
		}
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "secrets", Namespace: "policies"}}
		for name, spec := range templates {
			root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates, configurationPolicy(root.Name, name, spec).Spec.PolicyTemplates...)
		}
		copied := c.replicate(ctx, root)

		By("reporting every template")
		failed := map[string]string{
			"sec-update": "failed to update with the error", "sec-create": "cannot be created",
			"sec-fromsecret": "error calling mustToDate", "sec-lookup": "error calling mustToDate", "sec-lookup-list": "error calling mustToDate",
			"sec-object": "error calling mustToDate", "sec-mismatch": "found but not as specified", "sec-secret-mismatch": "found but not as specified",
		}
		for name, words := range failed {
			Eventually(c.latest(ctx, copied.Name, name)).Should(ContainSubstring(words), "template %s", name)
		}
		Eventually(policyEvents(ctx, c.name, copied.Name)).Should(WithTransform(func(e []string) int { return len(e) }, BeNumerically(">=", len(templates))), "an event per template")

		By("finding the Secret's bytes nowhere on the hub, and every message within an Event's limit")
		Expect(secret.foundIn(hubObjects(ctx, hubCP.Config, nil))).To(BeEmpty())
		Expect(policyEvents(ctx, c.name, copied.Name)()).To(HaveEach(WithTransform(func(s string) int { return len(s) }, BeNumerically("<=", 1024))))
		for _, d := range c.policy(ctx, copied.Name).Status.Details {
			for _, h := range d.History {
				Expect(len(h.Message)).To(BeNumerically("<=", 1024), "history of %s", d.TemplateMeta.Name)
			}
		}

		By("nor in the ConfigurationPolicies the agent writes on the spoke")
		cps := &policyv1.ConfigurationPolicyList{}
		Expect(spoke.List(ctx, cps, client.InNamespace(c.namespace))).To(Succeed())
		Expect(cps.Items).To(HaveLen(len(templates)))
		Expect(secret.foundIn(jsonOf(cps))).To(BeEmpty())

		By("saying what failed, by kind, name and field path")
		want := map[string]string{
			"sec-update":          "jobs [sec-job] in namespace default failed to update with the error `Job.batch \"sec-job\" is invalid: spec.template: Invalid value: field is immutable (values withheld: the template read a Secret)`",
			"sec-create":          "configmaps [sec-label] in namespace default is missing, and cannot be created, reason: `ConfigMap \"sec-label\" is invalid: metadata.labels: Invalid value",
			"sec-fromsecret":      "error calling mustToDate: parsing time \"[redacted]\" as \"2006-01-02\": cannot parse \"[redacted]\" as \"2006\"",
			"sec-lookup":          "error calling mustToDate: parsing time \"[redacted]\" as \"2006-01-02\": cannot parse \"[redacted]\" as \"2006\"",
			"sec-lookup-list":     "error calling mustToDate: parsing time",
			"sec-object":          "error calling mustToDate: parsing time \"[redacted]\" as \"2006-01-02\": cannot parse \"[redacted]\" as \"2006\"",
			"sec-mismatch":        "configmaps [sec-copy] found but not as specified in namespace default",
			"sec-secret-mismatch": "secrets [keys] found but not as specified in namespace default",
		}
		for name, words := range want {
			Expect(c.latest(ctx, copied.Name, name)()).To(ContainSubstring(words), "template %s", name)
		}
	})

	It("never puts a value of a hub Secret into a copy, its annotation or an event, and gets its HubTemplateError event through", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-sec")
		cluster := newClusterName("plc-sec-a")
		createPolicyMember(ctx, cluster, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		secret := newSecretValues()
		Expect(hubCP.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub-keys"},
			Data:       map[string][]byte{"tls.key": []byte(secret.key), "marker": []byte(secret.marker)},
		})).To(Succeed())
		root := configMapPolicy(ns, "hub-secrets", "hub-secrets", map[string]any{
			"key": `{{hub fromSecret "" "hub-keys" "tls.key" | base64dec | mustToDate "2006-01-02" hub}}`,
		})
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))

		Eventually(hubTemplateError(ctx, cluster, ns, root.Name)).Should(ContainSubstring(`error calling mustToDate: parsing time`))
		Expect(secret.foundIn(hubObjects(ctx, hubCP.Config, func(o map[string]any) bool {
			md, _ := o["metadata"].(map[string]any)
			return o["kind"] == "Secret" && md["namespace"] == ns && md["name"] == "hub-keys"
		}))).To(BeEmpty())
		Expect(hubTemplateError(ctx, cluster, ns, root.Name)()).To(ContainSubstring(`error calling mustToDate: parsing time "[redacted]`))
		Eventually(rootEvents(ctx, ns, root.Name)).Should(ContainElement(And(
			ContainSubstring("policy template 0 for cluster "+cluster), ContainSubstring("error calling mustToDate"))),
			"the HubTemplateError event reaches the API server")
		Expect(rootEvents(ctx, ns, root.Name)()).To(HaveEach(WithTransform(func(s string) int { return len(s) }, BeNumerically("<=", 1024))))
	})
})

// secretValues are distinctive bytes to put in a Secret and look for: a
// PEM private key (long enough that an error quoting it is longer than an
// Event may be) and a random marker.
type secretValues struct{ key, marker string }

func newSecretValues() secretValues {
	GinkgoHelper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	Expect(err).NotTo(HaveOccurred())
	b := make([]byte, 12)
	_, err = rand.Read(b)
	Expect(err).NotTo(HaveOccurred())
	return secretValues{
		key:    string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})),
		marker: "marker-" + hex.EncodeToString(b),
	}
}

// needles are what betrays the values: each as it is and base64-encoded,
// and each line of the key's body (an error quoting the key escapes its
// line breaks).
func (s secretValues) needles() []string {
	out := []string{s.marker, s.key}
	for _, v := range []string{s.marker, s.key} {
		out = append(out, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	for _, line := range strings.Split(s.key, "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	return out
}

// foundIn names each object (by its JSON) that holds a needle.
func (s secretValues) foundIn(objects map[string]string) []string {
	var out []string
	for name, text := range objects {
		for _, n := range s.needles() {
			if strings.Contains(text, n) {
				out = append(out, fmt.Sprintf("%s holds %.24q…", name, n))
				break
			}
		}
	}
	return out
}

// hubObjects are, by kind/namespace/name, the JSON of every object of
// every resource the hub lists, but those skip says to leave out.
func hubObjects(ctx context.Context, cfg *rest.Config, skip func(map[string]any) bool) map[string]string {
	GinkgoHelper()
	lists, err := discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	out := map[string]string{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		Expect(err).NotTo(HaveOccurred())
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !containsVerb(r.Verbs, "list") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred(), "list %s", r.Name)
			for _, o := range items.Items {
				if skip != nil && skip(o.Object) {
					continue
				}
				raw, err := json.Marshal(o.Object)
				Expect(err).NotTo(HaveOccurred())
				out[r.Name+"."+gv.Group+" "+o.GetNamespace()+"/"+o.GetName()] = string(raw)
			}
		}
	}
	Expect(out).NotTo(BeEmpty())
	return out
}

func containsVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// jsonOf is one object's JSON, by its type, for foundIn.
func jsonOf(obj runtime.Object) map[string]string {
	GinkgoHelper()
	raw, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	return map[string]string{fmt.Sprintf("%T", obj): string(raw)}
}

// policyEvents returns, for Eventually, the messages of the events about
// replicated policy name in the cluster's namespace.
func policyEvents(ctx context.Context, cluster, name string) func() []string {
	return func() []string {
		list := &corev1.EventList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(cluster))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == policyv1.PolicyKind && e.InvolvedObject.Name == name {
				out = append(out, e.Message)
			}
		}
		return out
	}
}

// secretSpec is the spec of a ConfigurationPolicy with one object template.
func secretSpec(action, compliance string, definition map[string]any) map[string]any {
	return map[string]any{
		"remediationAction": action,
		"object-templates":  []any{map[string]any{"complianceType": compliance, "objectDefinition": definition}},
	}
}

// configMapDefinition is ConfigMap default/name with labels and data.
func configMapDefinition(name string, labels, data map[string]any) map[string]any {
	md := map[string]any{"name": name, "namespace": "default"}
	if labels != nil {
		md["labels"] = labels
	}
	def := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
	if data != nil {
		def["data"] = data
	}
	return def
}

// secretJob is Job default/name whose one container has env.
func secretJob(name string, env ...corev1.EnvVar) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox", Env: env}},
		}}},
	}
}
