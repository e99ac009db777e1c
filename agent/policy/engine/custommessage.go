package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/tmplexec"
)

// customMessage renders the ConfigurationPolicy's customMessage for the
// result's compliance (compliant, or noncompliant for anything else), as
// OCM does: a Go template that sees .DefaultMessage (the message that
// would follow "<compliance>; ") and .Policy (the ConfigurationPolicy as
// a map, its status.compliant and status.relatedObjects being those of
// this evaluation). Without a template it returns def; a template that
// fails gives def followed by why, so that the message never goes silent.
func (r *Result) customMessage(def string) string {
	if r.policy == nil {
		return def
	}
	text := r.policy.Spec.CustomMessage.NonCompliant
	if r.Compliance() == policyv1.Compliant {
		text = r.policy.Spec.CustomMessage.Compliant
	}
	if strings.TrimSpace(text) == "" {
		return def
	}
	out, err := r.renderCustom(text, def)
	if err != nil {
		return def + " (the customMessage template failed: " + err.Error() + ")"
	}
	return out
}

func (r *Result) renderCustom(text, def string) (string, error) {
	tpl, err := tmplexec.Parse("customMessage", policytemplate.ManagedClusterDelims.Prepare(text), policytemplate.HelperFuncs())
	if err != nil {
		return "", err
	}
	cp := r.policy.DeepCopy()
	cp.Status.ComplianceState = r.Compliance()
	cp.Status.RelatedObjects = r.RelatedObjects(nil)
	raw, err := json.Marshal(cp)
	if err != nil {
		return "", fmt.Errorf("encode the ConfigurationPolicy: %w", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("decode the ConfigurationPolicy: %w", err)
	}
	var b strings.Builder
	data := struct {
		DefaultMessage string
		Policy         map[string]any
	}{def, obj}
	if err := tpl.Execute(&b, data); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}
