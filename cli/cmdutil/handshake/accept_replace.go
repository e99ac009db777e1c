package handshake

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// heldAgent says whether cluster mc already has an agent that holds its
// access, and which: the agent the hub recorded as accepted
// (identity.AcceptedAgentAnnotation), or, for a cluster that joined
// before the hub recorded agents, an unnamed one ("").
func heldAgent(mc *clusterv1.ManagedCluster) (agent string, held bool) {
	if mc == nil {
		return "", false
	}
	if a := mc.Annotations[identity.AcceptedAgentAnnotation]; a != "" {
		return a, true
	}
	return "", meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined)
}

// requestedAgent is the agent id a CSR's subject asks for, or "" when it
// names no agent of cluster.
func requestedAgent(csr *certificatesv1.CertificateSigningRequest, cluster string) string {
	req, err := identity.ParseCertificateRequest(csr.Spec.Request)
	if err != nil {
		return ""
	}
	c, agent, ok := identity.ParseAgentUser(req.Subject.CommonName)
	if !ok || c != cluster {
		return ""
	}
	return agent
}

// replacement is a join CSR for a cluster that already has an agent,
// which a plain accept does not approve.
type replacement struct {
	csr, agent, requester string
}

// checkReplacement says whether accept may approve join CSR csr of a
// cluster that already has agent current: only with --replace-agent
// naming the agent the CSR asks for. A refusal because the flag is
// missing is returned as a replacement, one because it names another
// agent as an error.
func (o *AcceptOptions) checkReplacement(csr *certificatesv1.CertificateSigningRequest, cluster string) (*replacement, error) {
	agent := requestedAgent(csr, cluster)
	switch {
	case o.ReplaceAgent == "":
		return &replacement{csr: csr.Name, agent: agent, requester: csr.Spec.Username}, nil
	case agent != o.ReplaceAgent:
		return nil, fmt.Errorf("it asks for agent %q, not the agent --replace-agent names (%s)", agent, o.ReplaceAgent)
	}
	return nil, nil
}

// agentUserName is how messages name agent a of cluster c: its user name.
func agentUserName(c, a string) string {
	if a == "" {
		return "an agent not yet recorded (the cluster joined before the hub recorded its agents)"
	}
	return identity.AgentUser(c, a)
}

// replacements is the error for join CSRs of a cluster that already has
// an agent, nil when there are none.
func (p AcceptPass) replacements() error {
	if len(p.replaced) == 0 {
		return nil
	}
	lines := make([]string, len(p.replaced))
	agents := map[string]bool{}
	var deletes, tokens []string
	for i, r := range p.replaced {
		lines[i] = fmt.Sprintf("CSR %s asks for a new agent, %s (requested by %s)", r.csr, agentUserName(p.name, r.agent), r.requester)
		agents[r.agent] = true
		deletes = append(deletes, r.csr)
		if id, ok := strings.CutPrefix(r.requester, "system:bootstrap:"); ok {
			tokens = append(tokens, bootstrapapi.BootstrapTokenSecretPrefix+id)
		}
	}
	replace := "AGENT-ID"
	if len(agents) == 1 && p.replaced[0].agent != "" {
		replace = p.replaced[0].agent
	}
	revoke := ""
	if len(tokens) > 0 {
		revoke = fmt.Sprintf(" and the join token it was made with (kubectl -n kube-system delete secret %s)", strings.Join(tokens, " "))
	}
	return fmt.Errorf("refused to approve %d CSR(s) of cluster %s: it already has an accepted agent, %s, and a plain accept never replaces it:\n  %s\n"+
		"Whoever holds a join token can ask for any cluster's name. If you have checked that the requester is the cluster's new agent (the old one is gone, e.g. it lost its certificate), run `flotilla accept --clusters %s --replace-agent %s`: the hub then gives the cluster's access to the new agent alone and refuses the old agent's certificate. Otherwise delete the CSR (kubectl delete csr %s)%s",
		len(p.replaced), p.name, agentUserName(p.name, p.current), strings.Join(lines, "\n  "),
		p.name, replace, strings.Join(deletes, " "), revoke)
}

// recordReplacement makes o.ReplaceAgent the accepted agent of mc before
// its CSR is approved, so that the hub never holds a certificate of the
// new agent that the old one's access would still be bound to. The
// write is guarded by the resourceVersion read.
func (o *AcceptOptions) recordReplacement(ctx context.Context, c *cmdutil.Clients, mc *clusterv1.ManagedCluster) error {
	if mc.Annotations[identity.AcceptedAgentAnnotation] == o.ReplaceAgent {
		return nil
	}
	old := mc.Annotations[identity.AcceptedAgentAnnotation]
	updated := mc.DeepCopy()
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[identity.AcceptedAgentAnnotation] = o.ReplaceAgent
	if err := c.Ctrl.Patch(ctx, updated, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil {
		return cmdutil.Explain(err, c.Where, fmt.Sprintf("record agent %s as the accepted agent of ManagedCluster %s", o.ReplaceAgent, mc.Name))
	}
	o.Notef("Hub: agent %s replaces %s as the agent of cluster %s: the old agent's certificate is no longer accepted",
		identity.AgentUser(mc.Name, o.ReplaceAgent), agentUserName(mc.Name, old), mc.Name)
	return nil
}
