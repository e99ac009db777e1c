package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// corpusDir holds realistic policies, each with the objects of the
// cluster it is evaluated against, and expected.yaml, what OCM's
// semantics say each reports.
const corpusDir = "../policycorpus"

// corpusCase is one entry of an expected*.yaml file.
type corpusCase struct {
	File string `json:"file"`
	// Inform and Enforce map a policy template's name to its history message.
	Inform    map[string]string `json:"inform"`
	Enforce   map[string]string `json:"enforce"`
	Actions   []string          `json:"actions"`
	Acted     []string          `json:"acted"`
	Pending   map[string]string `json:"pending"`
	Release   bool              `json:"release"`
	Untouched bool              `json:"untouched"`
	Error     []string          `json:"error"`

	policy  *policyv1.Policy
	objects []*unstructured.Unstructured
}

// loadCorpus reads the expected*.yaml files (expected.yaml, and one per
// area, such as expected-templates.yaml) and the case files they name.
func loadCorpus() []*corpusCase {
	GinkgoHelper()
	expected, err := filepath.Glob(filepath.Join(corpusDir, "expected*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var cases []*corpusCase
	for _, name := range expected {
		data, err := os.ReadFile(name)
		Expect(err).NotTo(HaveOccurred())
		var some []*corpusCase
		Expect(yaml.UnmarshalStrict(data, &some)).To(Succeed(), name)
		cases = append(cases, some...)
	}
	files, err := filepath.Glob(filepath.Join(corpusDir, "[0-9]*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(cases).To(HaveLen(len(files)), "the expected*.yaml files must hold one entry per case file")
	for _, c := range cases {
		objs, err := engine.ReadFile(filepath.Join(corpusDir, c.File))
		Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if o.GetKind() == policyv1.PolicyKind {
				raw, err := json.Marshal(o.Object)
				Expect(err).NotTo(HaveOccurred())
				c.policy = &policyv1.Policy{}
				Expect(json.Unmarshal(raw, c.policy)).To(Succeed())
				continue
			}
			c.objects = append(c.objects, o)
		}
		Expect(c.policy).NotTo(BeNil(), c.File)
	}
	return cases
}

// withMode is the case's policy file with remediationAction mode, written
// to dir, for `flotilla policy test`.
func (c *corpusCase) withMode(dir string, mode policyv1.RemediationAction) string {
	GinkgoHelper()
	p := c.policy.DeepCopy()
	p.Spec.RemediationAction = mode
	data, err := yaml.Marshal(p)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, string(mode)+"-"+c.File)
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

// compliance is what messages roll up to.
func compliance(messages map[string]string) policyv1.ComplianceState {
	for _, m := range messages {
		if !strings.HasPrefix(m, string(policyv1.Compliant)+";") {
			return policyv1.NonCompliant
		}
	}
	return policyv1.Compliant
}

// policyTestRun is `flotilla policy test -o json`, decoded.
type policyTestRun struct {
	code     int
	stderr   string
	messages map[string]string
	state    policyv1.ComplianceState
	actions  []string
}

func runPolicyTest(ctx context.Context, file, against string) policyTestRun {
	GinkgoHelper()
	res := flotilla(ctx, "policy", "test", file, "--against", against, "-o", "json")
	var report struct {
		Policies []struct {
			Status  policyv1.PolicyStatus `json:"status"`
			Actions []struct {
				Action string                  `json:"action"`
				Object policyv1.ObjectResource `json:"object"`
			} `json:"actions"`
		} `json:"policies"`
	}
	Expect(json.Unmarshal([]byte(res.Stdout), &report)).To(Succeed(), res.Stdout+res.Stderr)
	Expect(report.Policies).To(HaveLen(1))
	out := policyTestRun{code: res.Code, stderr: res.Stderr, messages: map[string]string{}, state: report.Policies[0].Status.ComplianceState}
	for _, d := range report.Policies[0].Status.Details {
		out.messages[d.TemplateMeta.Name] = d.History[0].Message
	}
	for _, a := range report.Policies[0].Actions {
		ref := a.Object.Metadata.Name
		if ns := a.Object.Metadata.Namespace; ns != "" {
			ref = ns + "/" + ref
		}
		out.actions = append(out.actions, fmt.Sprintf("%s %s %s", a.Action, a.Object.Kind, ref))
	}
	return out
}

// createCorpusObject creates a case's object on the spoke, once its kind is
// served (a case may hold the CRD of its kinds, as Gatekeeper's cases do),
// and writes the status the object has in the file, playing the
// controller that owns it (Gatekeeper's audit, for a constraint).
func createCorpusObject(ctx context.Context, c *policyCluster, file string, o *unstructured.Unstructured) {
	GinkgoHelper()
	Eventually(func() error { return c.env.spoke.Client.Create(ctx, o.DeepCopy()) }).Should(Succeed(), "%s: %s %s", file, o.GetKind(), o.GetName())
	status, ok := o.Object["status"]
	if !ok {
		return
	}
	Eventually(func() error {
		live := o.DeepCopy()
		if err := c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
			return err
		}
		live.Object["status"] = status
		return c.env.spoke.Client.Status().Update(ctx, live)
	}).Should(Succeed(), "%s: the status of %s %s", file, o.GetKind(), o.GetName())
}

// messages are the newest messages of a replicated policy's templates.
func (c *policyCluster) messages(ctx context.Context, name string) map[string]string {
	out := map[string]string{}
	for _, d := range c.policy(ctx, name).Status.Details {
		if len(d.History) > 0 {
			out[d.TemplateMeta.Name] = d.History[0].Message
		}
	}
	return out
}

var _ = Describe("Policy corpus: live and offline agree, and say what OCM's semantics say", Ordered, func() {
	var (
		cases []*corpusCase
		c     *policyCluster
	)

	BeforeAll(func(ctx SpecContext) {
		cases = loadCorpus()
		Expect(len(cases)).To(BeNumerically(">=", 25))
		c = joinPolicyCluster(ctx)
	})

	It("offline: `flotilla policy test` reports each policy as expected, in inform and in enforce", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		against := func(cc *corpusCase) string { return filepath.Join(corpusDir, cc.File) }
		for _, cc := range cases {
			By(cc.File)
			inform := runPolicyTest(ctx, cc.withMode(dir, policyv1.Inform), against(cc))
			Expect(inform.messages).To(Equal(cc.Inform), cc.File)
			Expect(inform.state).To(Equal(compliance(cc.Inform)), cc.File)
			Expect(inform.actions).To(BeEmpty(), cc.File)
			enforceFile := cc.withMode(dir, policyv1.Enforce)
			enforce := runPolicyTest(ctx, enforceFile, against(cc))
			Expect(enforce.messages).To(Equal(cc.Inform), "%s: policy test performs nothing, so enforce reports as inform", cc.File)
			Expect(enforce.actions).To(Equal(cc.Actions), cc.File)
			if compliance(cc.Inform) == policyv1.Compliant {
				Expect(enforce.code).To(Equal(0), cc.File)
			} else {
				Expect(enforce.code).NotTo(Equal(0), cc.File)
			}
			for _, want := range cc.Error {
				Expect(enforce.stderr).To(And(ContainSubstring(enforceFile), ContainSubstring(want)), cc.File)
			}
		}

		By("refusing a Policy without a name, naming the file")
		nameless := filepath.Join(dir, "nameless.yaml")
		p := cases[0].policy.DeepCopy()
		p.Name = ""
		data, err := yaml.Marshal(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(nameless, data, 0o600)).To(Succeed())
		res := flotilla(ctx, "policy", "test", nameless, "--against", filepath.Join(corpusDir, cases[0].File))
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(nameless + ": a Policy has no metadata.name"))
		Expect(res.Stdout).NotTo(ContainSubstring("Policy :"))
	})

	It("live, inform: the agent reports each policy as `policy test` does", func(ctx SpecContext) {
		for _, cc := range cases {
			for _, o := range cc.objects {
				createCorpusObject(ctx, c, cc.File, o)
			}
		}
		for _, cc := range cases {
			root := cc.policy.DeepCopy()
			root.Spec.RemediationAction = policyv1.Inform
			c.replicate(ctx, root)
		}
		for _, cc := range cases {
			name := "policies." + cc.policy.Name
			Eventually(func() map[string]string { return c.messages(ctx, name) }).Should(Equal(cc.Inform), cc.File)
			Expect(c.policy(ctx, name).Status.ComplianceState).To(Equal(compliance(cc.Inform)), cc.File)
		}

		By("recording each message's compliance Event in the cluster's namespace, named by history[].eventName")
		p := c.policy(ctx, "policies."+cases[0].policy.Name)
		h := p.Status.Details[0].History[0]
		Expect(h.EventName).To(HavePrefix(p.Name + "."))
		ev := &corev1.Event{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c.name, Name: h.EventName}, ev)).To(Succeed())
		Expect(ev.Reason).To(Equal("policy: " + c.name + "/" + p.Status.Details[0].TemplateMeta.Name))
		Expect(ev.Message).To(Equal(h.Message))
		Expect(ev.InvolvedObject.UID).To(Equal(p.UID))
	})

	It("live, enforce: the agent acts only on what a template names, and is Compliant only when the cluster is", func(ctx SpecContext) {
		for _, cc := range cases {
			c.setRemediation(ctx, "policies."+cc.policy.Name, policyv1.Enforce)
		}
		for _, cc := range cases {
			name := "policies." + cc.policy.Name
			if cc.Pending != nil {
				Eventually(func() map[string]string { return c.messages(ctx, name) }).Should(Equal(cc.Pending), cc.File)
				Consistently(func() map[string]string { return c.messages(ctx, name) }, "2s").Should(Equal(cc.Pending),
					"%s: a deletion that waits for a finalizer stays NonCompliant", cc.File)
			}
			if cc.Release {
				for _, o := range cc.objects {
					if len(o.GetFinalizers()) == 0 {
						continue
					}
					live := o.DeepCopy()
					Expect(c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed())
					patch := client.MergeFrom(live.DeepCopy())
					live.SetFinalizers(nil)
					Expect(c.env.spoke.Client.Patch(ctx, live, patch)).To(Succeed())
				}
			}
			Eventually(func() map[string]string { return c.messages(ctx, name) }).Should(Equal(cc.Enforce), cc.File)
			Expect(c.policy(ctx, name).Status.ComplianceState).To(Equal(compliance(cc.Enforce)), cc.File)
			var history []string
			for _, d := range c.policy(ctx, name).Status.Details {
				for _, h := range d.History {
					history = append(history, h.Message)
				}
			}
			for _, acted := range cc.Acted {
				Expect(history).To(ContainElement(ContainSubstring(acted)), cc.File)
			}
			if cc.Untouched {
				for _, o := range cc.objects {
					live := o.DeepCopy()
					Expect(c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed(), "%s: %s %s", cc.File, o.GetKind(), o.GetName())
					Expect(live.GetDeletionTimestamp()).To(BeNil(), cc.File)
					for _, field := range []string{"data", "rules", "spec"} {
						if want, ok := o.Object[field]; ok {
							Expect(live.Object[field]).To(Equal(want), "%s: %s %s.%s", cc.File, o.GetKind(), o.GetName(), field)
						}
					}
				}
			}
		}
	})

	It("live and offline agree after enforce: `policy test` against the spoke reports what the agent does", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		for _, cc := range cases {
			if len(cc.Error) > 0 || cc.Pending != nil || len(cc.Actions) == 0 {
				continue
			}
			run := runPolicyTest(ctx, cc.withMode(dir, policyv1.Inform), c.env.spoke.AdminKubeconfig)
			Expect(run.messages).To(Equal(cc.Enforce), cc.File)
		}
	})
})
