package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/version"
)

// NewCommand returns `flotilla policy` with its subcommand test.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "policy",
		Short:   "Work with OCM governance policies",
		Example: `  flotilla policy test policy.yaml --against ./cluster-objects/`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPolicyTestCommand(g))
	return cmd
}

type policyTestOptions struct {
	*cmdutil.Globals
	against string
	output  string
	hub     hubOptions
}

func newPolicyTestCommand(g *cmdutil.Globals) *cobra.Command {
	o := &policyTestOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "test POLICY.yaml --against DIR|FILE|KUBECONFIG",
		Short: "Evaluate policies against a directory of objects or a cluster, as the agent would",
		Long: `Evaluate the Policies (and bare ConfigurationPolicies and CertificatePolicies) in POLICY.yaml
against the objects of a cluster, exactly as a Flotilla agent evaluates
them, and print the compliance messages (in OCM's words) and, object by
object, what was found and which fields differ.

--against names the cluster: a directory of YAML or JSON files (read
recursively) or a single such file stands for a cluster holding those
objects; a kubeconfig file makes the command read a live cluster. Nothing
is ever changed: an enforce policy reports its violations as inform does,
and what enforce would do.

Other objects in POLICY.yaml (Placements, PlacementBindings, PolicySets)
are ignored. The exit code is 0 when every policy is compliant, 1
otherwise, so that the command can gate a CI pipeline.
` + hubTemplatesHelp,
		Example: `  # Would the example policy pass on a cluster holding the objects in ./cluster?
  flotilla policy test policy-namespace.yaml --against ./cluster

  # Against a live cluster, with the results as JSON.
  flotilla policy test policy-namespace.yaml --against cluster1.kubeconfig -o json` + hubTemplatesExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one policy file (got %d): flotilla policy test POLICY.yaml --against DIR", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			if o.against == "" {
				return errors.New("--against is required: a directory or file of objects, or a kubeconfig")
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVar(&o.against, "against", "", "the cluster to evaluate against: a directory or file of YAML/JSON objects, or a kubeconfig")
	o.hub.addFlags(g, cmd)
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// policyTestReport is what `flotilla policy test -o json|yaml` prints.
type policyTestReport struct {
	// Compliant rolls up the policies' compliance.
	Compliant policyv1.ComplianceState `json:"compliant"`
	// Against is what the policies were evaluated against.
	Against string `json:"against"`
	// Policies has one entry per policy.
	Policies []policyTestResult `json:"policies"`
}

// policyTestResult is the outcome of one policy.
type policyTestResult struct {
	// Policy is namespace/name of the policy.
	Policy string `json:"policy"`
	// Status is the status the agent would report on the replicated policy.
	Status policyv1.PolicyStatus `json:"status"`
	// Actions are what enforce would do; policy test performs none.
	Actions []policyTestAction `json:"actions,omitempty"`
}

// policyTestAction is one action enforce would take.
type policyTestAction struct {
	// Template is the ConfigurationPolicy that asks for it.
	Template       string `json:"template"`
	*engine.Action `json:",inline"`
}

func (o *policyTestOptions) run(ctx context.Context, path string) error {
	policies, err := readPolicies(path)
	if err != nil {
		return err
	}
	if err := o.hub.resolve(ctx, path, policies); err != nil {
		return err
	}
	reader, what, err := o.reader()
	if err != nil {
		return err
	}
	report := policyTestReport{Against: what}
	var results []*engine.PolicyResult
	var states []policyv1.ComplianceState
	var failing, invalid []string
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for _, p := range policies {
		res := engine.EvaluatePolicy(ctx, p, reader)
		results = append(results, res)
		r := policyTestResult{Policy: policyName(p), Status: res.Status(now)}
		for _, t := range res.Templates {
			if t.Result == nil {
				continue
			}
			for _, a := range t.Result.Actions {
				r.Actions = append(r.Actions, policyTestAction{Template: t.Name, Action: a})
			}
		}
		report.Policies = append(report.Policies, r)
		states = append(states, r.Status.ComplianceState)
		if r.Status.ComplianceState != policyv1.Compliant {
			failing = append(failing, r.Policy)
		}
		for _, t := range res.Templates {
			if t.Err != nil {
				invalid = append(invalid, fmt.Sprintf("%s: Policy %s, policy template at index %d (%s): %v", path, r.Policy, t.Index, t.DisplayName(), t.Err))
			}
		}
	}
	report.Compliant = engine.Rollup(states...)
	if o.output != cmdutil.OutputText {
		if err := cmdutil.PrintData(o.Streams.Out, o.output, report); err != nil {
			return err
		}
	} else {
		for i, res := range results {
			printPolicyResult(o.Streams.Out, res, report.Policies[i])
		}
	}
	if len(invalid) > 0 {
		return fmt.Errorf("invalid policy templates (a template-error on every cluster):\n  %s", strings.Join(invalid, "\n  "))
	}
	if len(failing) > 0 {
		return fmt.Errorf("not compliant against %s: %s", what, strings.Join(failing, ", "))
	}
	return nil
}

// reader is what --against names: objects from files, or a live cluster.
func (o *policyTestOptions) reader() (engine.Reader, string, error) {
	info, err := os.Stat(o.against)
	if err != nil {
		return nil, "", fmt.Errorf("--against %s: %w", o.against, err)
	}
	if !info.IsDir() {
		if cfg, ok := loadKubeconfig(o.against, o.Context); ok {
			r, err := clusterReader(cfg)
			if err != nil {
				return nil, "", fmt.Errorf("--against %s: %w", o.against, err)
			}
			return r, "the cluster at " + cfg.Host, nil
		}
	}
	set, err := engine.LoadObjects(o.against)
	if err != nil {
		return nil, "", fmt.Errorf("--against: %w", err)
	}
	return set, o.against, nil
}

// loadKubeconfig reads path as a kubeconfig, when it is one.
func loadKubeconfig(path, context string) (*rest.Config, bool) {
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil || len(kc.Clusters) == 0 || len(kc.Contexts) == 0 {
		return nil, false
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, false
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "flotilla/" + version.Version
	cfg.Timeout = cmdutil.RequestTimeout
	return cfg, true
}

// clusterReader reads a live cluster.
func clusterReader(cfg *rest.Config) (engine.Reader, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &engine.ClusterReader{Client: dyn, Mapper: mapper}, nil
}

// readPolicies reads the Policies of a file; a bare ConfigurationPolicy
// or CertificatePolicy counts as a Policy of that one template.
func readPolicies(path string) ([]*policyv1.Policy, error) {
	objs, err := engine.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*policyv1.Policy
	for _, u := range objs {
		if u.GroupVersionKind().Group != policyv1.GroupName {
			continue
		}
		switch u.GetKind() {
		case policyv1.PolicyKind:
			if u.GetName() == "" {
				return nil, fmt.Errorf("%s: a Policy has no metadata.name: every Policy needs one (the hub replicates it as <namespace>.<name>)", path)
			}
			p := &policyv1.Policy{}
			if err := policytemplate.DecodePolicy(u.Object, p); err != nil {
				return nil, fmt.Errorf("%s: Policy %s: %w", path, u.GetName(), err)
			}
			out = append(out, p)
		case policyv1.ConfigurationPolicyKind, policyv1.CertificatePolicyKind:
			raw, err := json.Marshal(u.Object)
			if err != nil {
				return nil, err
			}
			p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace()}}
			p.Spec.PolicyTemplates = []policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: raw}}}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", path, engine.ErrNoPolicies)
	}
	return out, nil
}

func policyName(p *policyv1.Policy) string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

// printPolicyResult prints one policy's outcome for people: its
// compliance, then per template the message the agent would report, the
// objects with the fields that differ, and what enforce would do.
func printPolicyResult(w io.Writer, res *engine.PolicyResult, r policyTestResult) {
	fmt.Fprintf(w, "Policy %s: %s\n", r.Policy, r.Status.ComplianceState)
	for _, t := range res.Templates {
		name := t.DisplayName()
		if t.Other != nil {
			fmt.Fprintf(w, "  Template %s (%s):\n    %s\n", name, t.Kind, t.Message())
			printObjects(w, t.Other.Results)
			continue
		}
		if t.Result == nil {
			fmt.Fprintf(w, "  Template %s:\n    %s\n", name, t.Message())
			continue
		}
		mode := "inform"
		if t.Result.Enforce {
			mode = "enforce"
		}
		if t.Result.Severity != "" {
			mode += ", severity " + string(t.Result.Severity)
		}
		fmt.Fprintf(w, "  Template %s (%s):\n    %s\n", name, mode, t.Message())
		printObjects(w, t.Result.Results(0))
		for _, a := range t.Result.Actions {
			fmt.Fprintf(w, "    enforce would %s (not done by policy test)\n", a)
		}
	}
}

// printObjects prints a template's results object by object, with the
// fields that differ.
func printObjects(w io.Writer, results *policyv1.TemplateResults) {
	if results == nil {
		return
	}
	for _, obj := range results.Objects {
		ref := obj.Object.Kind + " " + objectName(obj.Object)
		fmt.Fprintf(w, "    - %s %s: %s\n", obj.Compliant, ref, obj.Reason)
		if obj.Message != "" {
			fmt.Fprintf(w, "        %s\n", obj.Message)
		}
		for _, d := range obj.Diffs {
			fmt.Fprintf(w, "        %s\n", describeDiff(d))
		}
	}
	if results.Omitted > 0 {
		fmt.Fprintf(w, "    (%d more objects)\n", results.Omitted)
	}
}

// objectName is namespace/name, "name" for cluster-scoped objects, and
// says when no object matched an unnamed template.
func objectName(r policyv1.ObjectResource) string {
	name := r.Metadata.Name
	if name == "" {
		name = "(none matching)"
	}
	if r.Metadata.Namespace != "" {
		return r.Metadata.Namespace + "/" + name
	}
	return name
}

// describeDiff says how a field differs, e.g. `data.a: is "1", want "2"`.
func describeDiff(d policyv1.FieldDiff) string {
	switch {
	case d.Expected == "" && d.Actual == "":
		return d.Path + ": differs (values withheld)"
	case d.Actual == "":
		return d.Path + ": missing, want " + d.Expected
	case d.Expected == "":
		return d.Path + ": is " + d.Actual + ", want it absent"
	}
	return d.Path + ": is " + d.Actual + ", want " + d.Expected
}
