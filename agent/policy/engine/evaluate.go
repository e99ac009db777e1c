package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// Evaluate evaluates cp against what r reads. cp.Spec.RemediationAction
// decides whether the result carries Actions: give the effective one (a
// Policy's remediationAction overrides the template's; see
// PolicyTemplates). Evaluate never fails: what cannot be evaluated is a
// NonCompliant template with a message that says why.
func Evaluate(ctx context.Context, cp *policyv1.ConfigurationPolicy, r Reader) *Result {
	res := &Result{Name: cp.Name, Enforce: cp.Spec.RemediationAction.IsEnforce(), Severity: cp.Spec.Severity, policy: cp,
		secrets: &policytemplate.Secrets{}}
	e := &evaluator{ctx: ctx, r: &secretReader{Reader: r, secrets: res.secrets}, cp: cp, res: res}
	templates := cp.Spec.ObjectTemplates
	if cp.Spec.ObjectTemplatesRaw != "" {
		var err error
		if templates, err = e.resolveRaw(cp.Spec.ObjectTemplatesRaw); err != nil {
			res.Err = &policyv1.TemplateError{ObjectTemplate: -1, Reason: ReasonTemplateError, Message: err.Error()}
			return res
		}
	}
	for i := range templates {
		res.Templates = append(res.Templates, e.objectTemplate(i, &templates[i]))
	}
	return res
}

// evaluator is one evaluation of one ConfigurationPolicy.
type evaluator struct {
	ctx context.Context
	r   Reader
	cp  *policyv1.ConfigurationPolicy
	res *Result
	// namespaces are the namespaces the namespaceSelector selects, once
	// a template needed them.
	namespaces    []string
	namespacesErr error
	selected      bool
}

// objectTemplate evaluates one object template. A template that uses the
// object context variables (.ObjectNamespace, .ObjectName, .Object) or
// skipObject is resolved once per object it may apply to (perObject);
// any other is resolved once, here.
func (e *evaluator) objectTemplate(i int, ot *policyv1.ObjectTemplate) (t *TemplateResult) {
	t = &TemplateResult{Index: i, NoDiffs: ot.RecordDiff == policyv1.RecordDiffNone}
	defer func() {
		// Input the engine did not foresee must not take the agent down.
		if p := recover(); p != nil {
			t.templateError(ReasonDecodeError, "internal error evaluating the object template at index [%d]: %v", i, p)
		}
	}()
	if vars := definitionContextVars(ot.ObjectDefinition.Raw); len(vars) > 0 {
		return e.perObject(t, ot, vars)
	}
	raw, res, err := e.resolve(ot.ObjectDefinition.Raw)
	if err != nil {
		return t.templateError(ReasonTemplateError, "%v", err)
	}
	t.Sensitive = res.sensitive
	c, tgt, failed := e.decode(t, ot, raw)
	if failed != nil {
		return failed
	}
	namespaces, msg := e.templateNamespaces(c.mapping, tgt.ns, tgt.name, c.gvk.Kind)
	if msg != nil {
		return t.templateError(msg.Reason, "%s", msg.Message)
	}
	selector, failed := objectSelector(t, ot, tgt.name)
	if failed != nil {
		return failed
	}
	for _, ns := range namespaces {
		if err := c.namespace(ns, tgt.name, selector, tgt.tmpl); err != nil {
			return t.templateError(ReasonMappingError, "%v", err)
		}
	}
	if selector != nil && len(t.Objects) == 0 {
		t.empty = fmt.Sprintf("No objects of kind %s were matched from the policy objectSelector", c.gvk.Kind)
	}
	t.summarize()
	return t
}

// target is an object definition decoded: the object and where it is.
type target struct {
	tmpl     map[string]any
	name, ns string
}

// decode decodes an object definition and prepares the check of its
// objects. failed, when set, is t with the error that stops it.
func (e *evaluator) decode(t *TemplateResult, ot *policyv1.ObjectTemplate, raw []byte) (c *check, tgt target, failed *TemplateResult) {
	i := t.Index
	if err := utiljson.Unmarshal(raw, &tgt.tmpl); err != nil || tgt.tmpl == nil {
		if err == nil {
			err = fmt.Errorf("the object definition is empty")
		}
		return nil, tgt, t.templateError(ReasonDecodeError, "Decoding error, please check your policy file! Aborting handling the object template at index [%d] in policy `%s` with error = `%v`", i, e.cp.Name, err)
	}
	apiVersion, _ := tgt.tmpl["apiVersion"].(string)
	kind, _ := tgt.tmpl["kind"].(string)
	kind = strings.TrimSpace(kind)
	gv, gvErr := schema.ParseGroupVersion(apiVersion)
	if kind == "" || apiVersion == "" || gvErr != nil {
		return nil, tgt, t.templateError(ReasonDecodeError, "The kind and apiVersion fields are required on the object template at index %d in policy %s", i, e.cp.Name)
	}
	if err := policytemplate.ValidateObjectTemplate(ot, fmt.Sprintf("spec.object-templates[%d]", i)); err != nil {
		return nil, tgt, t.templateError(ReasonDecodeError, "%v", err)
	}
	gvk := gv.WithKind(kind)
	mapping, err := e.r.Mapping(gvk)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, tgt, t.templateError(ReasonMappingError, "couldn't find mapping resource with kind %s in API version %s, please check if you have CRD deployed", kind, apiVersion)
		}
		return nil, tgt, t.templateError(ReasonMappingError, "%v", err)
	}
	t.Resource = mapping.Resource.Resource
	t.Sensitive = t.Sensitive || gvk.GroupKind() == schema.GroupKind{Kind: "Secret"}
	tgt.name, tgt.ns = nameOf(tgt.tmpl)
	if !namespaced(mapping) {
		clearNamespace(tgt.tmpl)
	}
	c = &check{e: e, t: t, mapping: mapping, gvk: gvk, apiVersion: apiVersion,
		mustNot: ot.ComplianceType.Is(policyv1.MustNotHave), mode: modeOf(ot.ComplianceType), recreate: ot.RecreateOption}
	c.metaMode = c.mode
	if ot.MetadataComplianceType != "" {
		c.metaMode = modeOf(ot.MetadataComplianceType)
	}
	return c, tgt, nil
}

// nameOf returns the trimmed metadata.name and metadata.namespace of an object definition.
func nameOf(tmpl map[string]any) (name, ns string) {
	md, _ := tmpl["metadata"].(map[string]any)
	name, _ = md["name"].(string)
	ns, _ = md["namespace"].(string)
	return strings.TrimSpace(name), strings.TrimSpace(ns)
}

// clearNamespace drops the namespace of a cluster-scoped object definition.
func clearNamespace(tmpl map[string]any) {
	if md, ok := tmpl["metadata"].(map[string]any); ok {
		delete(md, "namespace")
	}
}

// objectSelector parses the objectSelector of a template that names no
// object; nil without one.
func objectSelector(t *TemplateResult, ot *policyv1.ObjectTemplate, name string) (labels.Selector, *TemplateResult) {
	if ot.ObjectSelector == nil || name != "" {
		return nil, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(ot.ObjectSelector)
	if err != nil {
		return nil, t.templateError(ReasonObjectSelectorError, "Error parsing provided objectSelector in the object-template at index [%d]: %v", t.Index, err)
	}
	return selector, nil
}

// templateNamespaces are the namespaces to look in: none for a
// cluster-scoped kind (""), the template's own, or those the
// namespaceSelector selects.
func (e *evaluator) templateNamespaces(m *meta.RESTMapping, ns, name, kind string) ([]string, *policyv1.TemplateError) {
	switch {
	case !namespaced(m):
		return []string{""}, nil
	case ns != "":
		return []string{ns}, nil
	}
	if !e.selected {
		e.namespaces, e.namespacesErr = e.selectNamespaces()
		e.selected = true
	}
	if e.namespacesErr != nil {
		return nil, &policyv1.TemplateError{Reason: ReasonNamespaceSelectorError,
			Message: fmt.Sprintf("Error filtering namespaces with provided namespaceSelector: %v", e.namespacesErr)}
	}
	if len(e.namespaces) == 0 {
		space := ""
		if name != "" {
			space = " "
		}
		return nil, &policyv1.TemplateError{Reason: ReasonMissingNamespace, Message: fmt.Sprintf(
			"namespaced object%s%s of kind %s has no namespace specified from the policy namespaceSelector nor the object metadata", space, name, kind)}
	}
	return e.namespaces, nil
}

// check compares the objects of one object template.
type check struct {
	e              *evaluator
	t              *TemplateResult
	mapping        *meta.RESTMapping
	gvk            schema.GroupVersionKind
	apiVersion     string
	mustNot        bool
	mode, metaMode mode
	recreate       policyv1.RecreateOption
}

// namespace checks the objects in one namespace ("" for cluster-scoped)
// against tmpl: the named one, those the selector selects, or every
// object of the kind.
func (c *check) namespace(ns, name string, selector labels.Selector, tmpl map[string]any) error {
	ctx, r := c.e.ctx, c.e.r
	if name != "" {
		obj, err := r.Get(ctx, c.mapping, ns, name)
		if err != nil {
			return fmt.Errorf("failed to get %s %s: %w", c.mapping.Resource.Resource, name, err)
		}
		c.one(ns, name, obj, tmpl)
		return nil
	}
	list := selector
	if list == nil {
		list = labels.Everything()
	}
	objs, err := r.List(ctx, c.mapping, ns, list)
	if err != nil {
		return fmt.Errorf("failed to list %s: %w", c.mapping.Resource.Resource, err)
	}
	sortByName(objs)
	if selector == nil {
		c.unnamed(ns, objs, tmpl)
		return nil
	}
	for _, obj := range objs {
		c.one(ns, obj.GetName(), obj, named(tmpl, obj.GetName()))
	}
	return nil
}

// named is a copy of tmpl named name.
func named(tmpl map[string]any, name string) map[string]any {
	out := runtime.DeepCopyJSON(tmpl)
	(&unstructured.Unstructured{Object: out}).SetName(name)
	return out
}

// one checks the object ns/name, which is nil when it does not exist.
func (c *check) one(ns, name string, obj *unstructured.Unstructured, tmpl map[string]any) {
	o := c.result(ns, name, obj)
	switch {
	case c.mustNot && obj == nil:
		o.Compliant, o.Reason = policyv1.Compliant, ReasonNotFoundAsExpected
	case c.mustNot:
		if len(compareObject(tmpl, obj.Object, c.mode, c.metaMode)) > 0 {
			o.Compliant, o.Reason = policyv1.Compliant, ReasonFoundNotApplicable
			break
		}
		o.Compliant, o.Reason = policyv1.NonCompliant, ReasonFoundNotWanted
		if obj.GetDeletionTimestamp() != nil {
			// Deleted already, and not gone yet: nothing to do but wait.
			o.deleting(c.t.Resource, obj)
			break
		}
		c.act(ActionDelete, obj, o)
	case obj == nil:
		o.Compliant, o.Reason = policyv1.NonCompliant, ReasonNotFound
		c.act(ActionCreate, c.desired(tmpl, ns, name), o)
	default:
		diffs := compareObject(tmpl, obj.Object, c.mode, c.metaMode)
		if len(diffs) == 0 {
			o.Compliant, o.Reason = policyv1.Compliant, ReasonFoundAsExpected
			break
		}
		o.Compliant, o.Reason, o.Diffs = policyv1.NonCompliant, ReasonFoundNoMatch, diffs
		o.statusDiffs = len(statusOnly(diffs)) > 0
		merged := mergeObject(tmpl, obj.Object, c.mode, c.metaMode)
		if patch := mergePatch(obj.Object, merged); len(patch) > 0 {
			if a := c.act(ActionUpdate, &unstructured.Unstructured{Object: merged}, o); a != nil {
				a.want = tmpl
				a.Patch, _ = json.Marshal(patch)
				a.Recreate = c.recreate
			}
		}
	}
}

// unnamed checks a template without a name against every object of its
// kind in ns: musthave and mustonlyhave want one that matches, mustnothave
// wants none. It never plans an action: a template that names no object
// (no metadata.name, no objectSelector) is evaluated as inform whatever
// remediationAction says, as OCM does, so that enforce never creates,
// changes or deletes an object no template named. Each of its results
// says so when the policy enforces.
func (c *check) unnamed(ns string, objs []*unstructured.Unstructured, tmpl map[string]any) {
	note := ""
	if c.e.res.Enforce {
		note = InformOnlyUnnamed
	}
	var matching []*unstructured.Unstructured
	for _, obj := range objs {
		if len(compareObject(tmpl, obj.Object, c.mode, c.metaMode)) == 0 {
			matching = append(matching, obj)
		}
	}
	if len(matching) == 0 {
		o := c.result(ns, "", nil)
		o.Compliant, o.Reason, o.Message = policyv1.NonCompliant, ReasonNotFound, note
		if c.mustNot {
			o.Compliant, o.Reason = policyv1.Compliant, ReasonNotFoundAsExpected
		}
		return
	}
	for _, obj := range matching {
		o := c.result(ns, obj.GetName(), obj)
		o.Compliant, o.Reason, o.Message = policyv1.Compliant, ReasonFoundAsExpected, note
		if c.mustNot {
			o.Compliant, o.Reason = policyv1.NonCompliant, ReasonFoundNotWanted
		}
	}
}

// InformOnlyUnnamed is the message of an object that an enforced template
// without a name found or looked for: OCM's words for why it evaluates
// the template as inform.
const InformOnlyUnnamed = "The object template does not specify a name. Setting the remediation action to inform."

// result adds the result of object ns/name to the template.
func (c *check) result(ns, name string, obj *unstructured.Unstructured) *ObjectResult {
	o := &ObjectResult{ObjectResult: policyv1.ObjectResult{
		ObjectTemplate: int32(c.t.Index),
		Object: policyv1.ObjectResource{Kind: c.gvk.Kind, APIVersion: c.apiVersion,
			Metadata: policyv1.ObjectMetadata{Name: name, Namespace: ns}},
	}}
	if obj != nil {
		o.UID = obj.GetUID()
	}
	o.mapping = c.mapping
	c.t.Objects = append(c.t.Objects, o)
	return o
}

// desired is the object that enforce creates for tmpl: the template
// without status, named.
func (c *check) desired(tmpl map[string]any, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(tmpl)}
	delete(u.Object, "status")
	u.SetName(name)
	if namespaced(c.mapping) {
		u.SetNamespace(ns)
	}
	return u
}

// act plans an action when enforcing.
func (c *check) act(t ActionType, obj *unstructured.Unstructured, o *ObjectResult) *Action {
	if !c.e.res.Enforce {
		return nil
	}
	a := &Action{Type: t, Mapping: c.mapping, Object: obj, Template: c.t.Index, Ref: o.Object, result: o, tmpl: c.t, mode: c.mode, metaMode: c.metaMode}
	c.e.res.Actions = append(c.e.res.Actions, a)
	return a
}
