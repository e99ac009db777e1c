package handshake

import (
	"context"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// AcceptPass is what one pass over a cluster found and did.
type AcceptPass struct {
	name    string
	cluster *clusterv1.ManagedCluster // nil while it does not exist
	csrs    int                       // CSRs labelled for the cluster, in any state
	// approved counts the CSRs approved in this pass.
	approved int
	refused  []string
	// replaced are join CSRs of a cluster that already has an agent,
	// current (by id; "" when not recorded).
	replaced []replacement
	current  string
	// skipCheck records whether --skip-approve-check was given, for messages.
	skipCheck bool
}

// acceptFrom approves, of csrs (the cluster's, in any state), the
// acceptable pending ones, and sets hubAcceptsClient on mc unless it is
// nil (not there yet).
func (o *AcceptOptions) acceptFrom(ctx context.Context, c *cmdutil.Clients, name string, csrs []certificatesv1.CertificateSigningRequest, mc *clusterv1.ManagedCluster) (AcceptPass, error) {
	pass := AcceptPass{name: name, skipCheck: o.SkipCheck, csrs: len(csrs)}
	var approvable, refused []*certificatesv1.CertificateSigningRequest
	var held bool
	pass.current, held = heldAgent(mc)
	for i := range csrs {
		csr := &csrs[i]
		if csrState(csr) != "pending" || o.watch.wroteHere(csrWrite(csr.Name)) {
			continue
		}
		if !o.SkipCheck {
			if err := checkCSR(csr, name); err != nil {
				pass.refused = append(pass.refused, fmt.Sprintf("CSR %s: %v (requested by %s)", csr.Name, err, csr.Spec.Username))
				refused = append(refused, csr)
				continue
			}
		}
		if (held || o.ReplaceAgent != "") && isBootstrapRequester(csr.Spec.Username, csr.Spec.Groups) {
			r, err := o.checkReplacement(csr, name)
			if err != nil {
				pass.refused = append(pass.refused, fmt.Sprintf("CSR %s: %v (requested by %s)", csr.Name, err, csr.Spec.Username))
				refused = append(refused, csr)
				continue
			}
			if r != nil {
				pass.replaced = append(pass.replaced, *r)
				continue
			}
		}
		approvable = append(approvable, csr)
	}
	// Suspicious CSRs alone stop everything for the cluster, until an
	// administrator has looked. Beside a CSR that passes the checks, they
	// are ignored, and said to be: whoever made them cannot keep the real
	// cluster out by spoofing its name.
	if (len(pass.refused) > 0 || len(pass.replaced) > 0) && len(approvable) == 0 {
		return pass, nil
	}
	for i, csr := range refused {
		if _, seen := o.ignored.LoadOrStore(csr.Name, true); !seen {
			o.Notef("Hub: ignored %s, labelled for cluster %s, as the cluster has a CSR that passes the checks", pass.refused[i], name)
		}
	}
	pass.refused = nil
	if o.ReplaceAgent != "" && mc != nil && len(approvable) > 0 {
		if err := o.recordReplacement(ctx, c, mc); err != nil {
			return pass, err
		}
	}
	for _, csr := range approvable {
		if err := approveCSR(ctx, c, csr); err != nil {
			return pass, err
		}
		o.watch.wrote(csrWrite(csr.Name))
		pass.approved++
		o.Notef("Hub: approved CSR %s of cluster %s (requested by %s)", csr.Name, name, csr.Spec.Username)
	}
	if mc == nil {
		return pass, nil
	}
	pass.cluster = mc
	if !mc.Spec.HubAcceptsClient && !o.watch.wroteHere(clusterWrite(mc.UID)) {
		if err := SetHubAcceptsClient(ctx, c, mc.DeepCopy(), true); err != nil {
			return pass, err
		}
		o.watch.wrote(clusterWrite(mc.UID))
		o.Notef("Hub: set hubAcceptsClient on ManagedCluster %s", name)
	}
	return pass, nil
}

func approveCSR(ctx context.Context, c *cmdutil.Clients, csr *certificatesv1.CertificateSigningRequest) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:           certificatesv1.CertificateApproved,
		Status:         corev1.ConditionTrue,
		Reason:         "FlotillaAccept",
		Message:        "Approved by flotilla accept.",
		LastUpdateTime: metav1.Now(),
	})
	_, err := c.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	return cmdutil.Explain(err, c.Where, "approve CSR "+csr.Name)
}

// SetHubAcceptsClient sets (accept) or clears spec.hubAcceptsClient of mc.
func SetHubAcceptsClient(ctx context.Context, c *cmdutil.Clients, mc *clusterv1.ManagedCluster, accept bool) error {
	orig := mc.DeepCopy()
	mc.Spec.HubAcceptsClient = accept
	if err := c.Ctrl.Patch(ctx, mc, client.MergeFrom(orig)); err != nil {
		return cmdutil.Explain(err, c.Where, fmt.Sprintf("set spec.hubAcceptsClient=%t on ManagedCluster %s", accept, mc.Name))
	}
	return nil
}

// refusals is the error for refused CSRs, nil when there are none.
func (p AcceptPass) refusals() error {
	if len(p.refused) == 0 {
		return p.replacements()
	}
	return errors.Join(fmt.Errorf("refused to approve %d CSR(s) of cluster %s, so nothing was approved or accepted for it:\n  %s\nIf you trust them after inspecting them (kubectl get csr NAME -o yaml), approve them with --skip-approve-check; otherwise delete them (kubectl delete csr NAME)",
		len(p.refused), p.name, strings.Join(p.refused, "\n  ")), p.replacements())
}

// Verdict is the result of accept without --wait.
func (p AcceptPass) Verdict() error {
	if err := p.refusals(); err != nil {
		return err
	}
	if p.cluster == nil {
		return fmt.Errorf("ManagedCluster %s does not exist on the hub: the cluster has not asked to join yet\nRun `flotilla join ... --cluster-name %s` on it first, or accept with --wait to wait for it", p.name, p.name)
	}
	if p.approved == 0 && p.csrs == 0 && !meta.IsStatusConditionTrue(p.cluster.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
		return fmt.Errorf("cluster %s has no CSR to approve: its agent has not asked for credentials yet\nCheck that the agent runs on the cluster, or accept with --wait to wait for it", p.name)
	}
	return nil
}

// missing lists what cluster still lacks to be joined, first things first.
func (p AcceptPass) missing() []string {
	var m []string
	if p.cluster == nil {
		m = append(m, fmt.Sprintf("ManagedCluster %s does not exist yet (has `flotilla join` run on the cluster?)", p.name))
	}
	if p.csrs == 0 {
		m = append(m, "its agent has not created a CSR yet")
	}
	if len(m) > 0 {
		return m
	}
	conds := p.cluster.Status.Conditions
	if !meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionHubAccepted) {
		m = append(m, fmt.Sprintf("the hub has not set HubAcceptedManagedCluster=True yet (do the hub controllers run? see `flotilla describe cluster %s` and the hub's log)", p.name))
	}
	if !meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionJoined) {
		m = append(m, fmt.Sprintf("its agent has not joined yet (ManagedClusterJoined is not True: see `flotilla describe cluster %s` and the agent's log on the cluster)", p.name))
	}
	return m
}
