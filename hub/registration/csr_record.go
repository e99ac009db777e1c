package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// ocmBootstrapServiceAccounts are the bootstrap ServiceAccounts of OCM's
// own hubs, whose tokens OCM users join with.
var ocmBootstrapServiceAccounts = []string{
	"system:serviceaccount:open-cluster-management:cluster-bootstrap",
	"system:serviceaccount:open-cluster-management:agent-registration-bootstrap",
}

// IsJoinIdentity says whether a CSR's requester is an identity that joins
// new clusters: a bootstrap token in bootstraptoken.Group, or a bootstrap
// ServiceAccount (Flotilla's or OCM's).
func IsJoinIdentity(user string, groups []string) bool {
	if user == bootstraptoken.ServiceAccountUser || slices.Contains(ocmBootstrapServiceAccounts, user) {
		return true
	}
	return strings.HasPrefix(user, "system:bootstrap:") && slices.Contains(groups, bootstraptoken.Group)
}

// approved says whether a CSR carries the Approved condition.
func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && (c.Status == corev1.ConditionTrue || c.Status == "") {
			return true
		}
	}
	return false
}

// joinAgent is the agent id an approved join CSR for its labelled cluster
// asks for, or "" when csr is not one: not approved, not made by a join
// identity, or not for exactly an agent of that cluster.
func joinAgent(csr *certificatesv1.CertificateSigningRequest) (cluster, agent string) {
	cluster = csr.Labels[clusterv1.ClusterNameLabel]
	if !approved(csr) || cluster == "" || !IsJoinIdentity(csr.Spec.Username, csr.Spec.Groups) {
		return "", ""
	}
	req, err := identity.ParseCertificateRequest(csr.Spec.Request)
	if err != nil {
		return "", ""
	}
	agent, err = identity.CheckAgentSubject(req, cluster)
	if err != nil {
		return "", ""
	}
	return cluster, agent
}

// recordJoinedAgent records, once a join CSR for a new cluster was
// approved, the agent it names as the cluster's accepted agent, which
// RBAC then names alone (clusterSubjects). A cluster that already has one,
// or that another agent joined before the hub recorded agents, keeps
// what it has: replacing a cluster's agent is for a hub admin to say
// (flotilla accept --replace-agent), never the outcome of an approval,
// since whoever holds any bootstrap token can ask for any cluster's name.
func (r *CSRReconciler) recordJoinedAgent(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	c, agent := joinAgent(csr)
	if agent == "" {
		return nil
	}
	logger := klog.FromContext(ctx)
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, cluster); err != nil {
		return client.IgnoreNotFound(err)
	}
	current := cluster.Annotations[identity.AcceptedAgentAnnotation]
	switch {
	case current == agent:
		return nil
	case current != "":
		logger.Info("A join CSR for another agent of an accepted cluster was approved; its certificate is given no access",
			"managedCluster", klog.KObj(cluster), "csr", csr.Name, "agent", agent, "acceptedAgent", current, "requester", csr.Spec.Username)
		r.Recorder.Eventf(cluster, csr, corev1.EventTypeWarning, reasonAgentNotAccepted, "Approve",
			"CSR %s of agent %s (requested by %s) was approved, but cluster %s's accepted agent is %s: the new certificate is given no access. To replace the agent, run flotilla accept --clusters %s --replace-agent %s",
			csr.Name, agent, csr.Spec.Username, c, current, c, agent)
		return nil
	case joinedByAnother(cluster, agent):
		// Joined before the hub recorded agents: its agent records itself
		// with its first renewal (recordRenewingAgent).
		logger.Info("A join CSR for a cluster that another agent has joined was approved; the agent is not recorded",
			"managedCluster", klog.KObj(cluster), "csr", csr.Name, "agent", agent, "joinedAgent", cluster.Annotations[identity.AgentIDAnnotation], "requester", csr.Spec.Username)
		return nil
	}
	// Decided on this read: the cluster had neither an agent nor joined.
	// A write that conflicts (the hub writes the cluster while it joins,
	// Joined among it) is tried again on a fresh read as long as no agent
	// is recorded: read again from the top, the cluster would look joined
	// before agents were recorded, and its agent would stay unrecorded
	// until its first renewal, refused meanwhile (its add-ons' CSRs among
	// it).
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		switch current := cluster.Annotations[identity.AcceptedAgentAnnotation]; {
		case current == agent:
			return nil
		case current != "":
			logger.Info("Another agent of the joining cluster was recorded first", "managedCluster", klog.KObj(cluster), "agent", agent, "acceptedAgent", current)
			return nil
		}
		err := r.recordAgent(ctx, cluster, agent)
		if apierrors.IsConflict(err) {
			// Read past the cache, which may not have the write yet,
			// into a new object (recordAgent set the annotation on this one).
			fresh := &clusterv1.ManagedCluster{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Name: c}, fresh); err != nil {
				return client.IgnoreNotFound(err)
			}
			cluster = fresh
		}
		return err
	})
}

// joinedByAnother says whether cluster was joined by an agent other than
// agent: it is Joined, and the agent that wrote Joined, which names itself
// in AgentIDAnnotation before it does, is not agent. Joined alone does not
// tell: the agent whose join CSR this is reports Joined as soon as its
// certificate is issued, often before this controller gets to the
// approval (a fleet accepted at once queues its CSRs here), and the
// cluster would look joined before agents were recorded. An agent that
// names no agent id (OCM's klusterlet) is taken for another.
func joinedByAnother(cluster *clusterv1.ManagedCluster, agent string) bool {
	return meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
		cluster.Annotations[identity.AgentIDAnnotation] != agent
}

// recordAgent writes agent as cluster's accepted agent, guarded by the
// resourceVersion read: of two approvals seen at once, one wins.
func (r *CSRReconciler) recordAgent(ctx context.Context, cluster *clusterv1.ManagedCluster, agent string) error {
	before := cluster.DeepCopy()
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[identity.AcceptedAgentAnnotation] = agent
	if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("record agent %s as the accepted agent of cluster %s: %w", agent, cluster.Name, err)
	}
	klog.FromContext(ctx).Info("Recorded the cluster's accepted agent", "managedCluster", klog.KObj(cluster), "agent", agent)
	return nil
}
