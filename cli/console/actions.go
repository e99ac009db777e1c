package console

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// action is one action button and the command that does the same.
type action struct {
	Action, Label, Class, Command, CSRF string
	Fields                              map[string]string
	// Confirm, for an action that is hard to undo, is the question the page
	// asks before it posts; ConfirmLabel labels the button that answers yes.
	Confirm, ConfirmLabel string
}

func actionAccept(csrf, cluster string) action {
	return action{Action: "accept", Label: "Accept", Class: "primary", Command: "flotilla accept --clusters " + cluster, CSRF: csrf, Fields: map[string]string{"cluster": cluster}}
}

func actionDeny(csrf, cluster string) action {
	return action{Action: "deny", Label: "Deny", Class: "danger", Command: "flotilla deny --clusters " + cluster, CSRF: csrf, Fields: map[string]string{"cluster": cluster},
		Confirm: denyQuestion(cluster), ConfirmLabel: "Deny cluster " + cluster}
}

// denyQuestion says what denying a cluster does, to be confirmed.
func denyQuestion(cluster string) string {
	return "Deny cluster " + cluster + "? The hub stops accepting it and removes its RBAC: its agent can no longer read its work or report its status. " +
		"The ManagedCluster and its namespace stay; Accept takes it back."
}

// confirmedField is the form field that says the user confirmed an action.
const confirmedField = "confirmed"

// needsConfirmation returns the action posted, with its question, when it
// asks first and the post does not say confirmed=yes; nil otherwise.
func needsConfirmation(csrf, act string, form func(string) string) *action {
	if act != "deny" || form(confirmedField) == "yes" {
		return nil
	}
	a := actionDeny(csrf, form("cluster"))
	return &a
}

func actionPause(csrf, ns, name string) action {
	return action{Action: "pause", Label: "Pause rollout", Command: "flotilla rollout pause " + name + " -n " + ns, CSRF: csrf, Fields: map[string]string{"namespace": ns, "name": name}}
}

func actionResume(csrf, ns, name string) action {
	return action{Action: "resume", Label: "Resume rollout", Class: "primary", Command: "flotilla rollout resume " + name + " -n " + ns, CSRF: csrf, Fields: map[string]string{"namespace": ns, "name": name}}
}

func actionRemediation(csrf, ns, name, to string) action {
	return action{Action: "remediation", Label: "Switch to " + to, Command: fmt.Sprintf(`kubectl patch policy %s -n %s --type merge -p '{"spec":{"remediationAction":"%s"}}'`, name, ns, to), CSRF: csrf, Fields: map[string]string{"namespace": ns, "name": name, "to": to}}
}

func init() {
	funcs["actionAccept"] = actionAccept
	funcs["actionDeny"] = actionDeny
	funcs["actionPause"] = actionPause
	funcs["actionResume"] = actionResume
	funcs["actionRemediation"] = actionRemediation
}

// resultData is the model of the page an action without script answers with.
type resultData struct {
	OK      bool
	Message string
	Back    string
}

// confirmData is the model of the page that asks to confirm an action
// posted without a script (the script asks in a dialog first).
type confirmData struct {
	Question string
	// Yes is the action again, with the confirmation.
	Yes  action
	Back string
}

// act runs one action with the caller's credentials. It answers a
// script's request with the message as text, and a plain form post with a
// page. An action that needs confirming and was posted unconfirmed is not
// done: a plain post gets a page that asks, a script's a 409.
func (s *server) act(w http.ResponseWriter, r *http.Request) {
	if !s.auth.originAllowed(r) || r.PostFormValue("csrf") != csrfOf(r) || csrfOf(r) == "" {
		http.Error(w, "Forbidden: this action did not come from the console's own page (origin or CSRF token missing or wrong).", http.StatusForbidden)
		return
	}
	script := r.Header.Get("X-Console") == "1"
	if a := needsConfirmation(csrfOf(r), r.PathValue("action"), r.PostFormValue); a != nil {
		if script {
			http.Error(w, "Not done: confirm first ("+a.Confirm+")", http.StatusConflict)
			return
		}
		yes := *a
		yes.Label, yes.Confirm = a.ConfirmLabel, ""
		yes.Fields = map[string]string{confirmedField: "yes"}
		for k, v := range a.Fields {
			yes.Fields[k] = v
		}
		s.render(w, r, "confirm", &page{Title: "Confirm", Section: "fleet", Data: confirmData{Question: a.Confirm, Yes: yes, Back: "/clusters/" + a.Fields["cluster"]}})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	msg, err := s.do(ctx, r.PathValue("action"), r.PostFormValue)
	status := http.StatusOK
	if err != nil {
		msg, status = "Refused: "+err.Error(), http.StatusForbidden
	}
	if script {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprint(w, msg)
		return
	}
	s.renderStatus(w, r, "result", &page{Title: "Action", Data: resultData{OK: err == nil, Message: msg, Back: "/fleet"}}, status)
}

func (s *server) do(ctx context.Context, act string, form func(string) string) (string, error) {
	ns, name := form("namespace"), form("name")
	switch act {
	case "accept":
		c := form("cluster")
		if err := s.opts.Actions.Accept(ctx, c); err != nil {
			return "", err
		}
		return "Accepted cluster " + c + ".", nil
	case "deny":
		c := form("cluster")
		if err := s.opts.Actions.Deny(ctx, c); err != nil {
			return "", err
		}
		return "Denied cluster " + c + ".", nil
	case "pause", "resume":
		if err := workview.SetPaused(ctx, s.store.client, client.ObjectKey{Namespace: ns, Name: name}, act == "pause"); err != nil {
			return "", err
		}
		return fmt.Sprintf("Rollout of ManifestWorkReplicaSet %s/%s: %sd.", ns, name, act), nil
	case "remediation":
		to := policyv1.RemediationAction(form("to"))
		if to != policyv1.Inform && to != policyv1.Enforce {
			return "", fmt.Errorf("remediation action %q: want inform or enforce", to)
		}
		obj := &policyv1.Policy{}
		obj.Namespace, obj.Name = ns, name
		patch := fmt.Sprintf(`{"spec":{"remediationAction":%q}}`, to)
		if err := s.store.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return "", err
		}
		return fmt.Sprintf("Policy %s/%s now %ss.", ns, name, to), nil
	}
	return "", fmt.Errorf("unknown action %q", act)
}
