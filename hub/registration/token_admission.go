package registration

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// TokenClusterPolicyName names the policy, and its binding, that hold a
// join token made for one cluster (flotilla init --cluster-name) to it.
const TokenClusterPolicyName = "flotilla-bootstrap-token-cluster"

const (
	// isClusterTokenExpr is true for a request made with a join token for
	// one cluster.
	isClusterTokenExpr = "request.userInfo.groups.exists(g, g.startsWith('" + bootstraptoken.ClusterGroupPrefix + "'))"
	// tokenClustersExpr lists the clusters the token is for.
	tokenClustersExpr = "request.userInfo.groups.filter(g, g.startsWith('" + bootstraptoken.ClusterGroupPrefix + "'))" +
		".map(g, g.substring(size('" + bootstraptoken.ClusterGroupPrefix + "')))"
	// askedClusterExpr is the cluster a ManagedCluster or CSR is for: its
	// name, or its cluster-name label.
	askedClusterExpr = "request.resource.resource == 'managedclusters' ? object.metadata.name : " +
		"(has(object.metadata.labels) && '" + clusterv1.ClusterNameLabel + "' in object.metadata.labels ? object.metadata.labels['" + clusterv1.ClusterNameLabel + "'] : '')"
	tokenClusterMessageExpr = "'user ' + request.userInfo.username + ' joins with a token for cluster ' + variables.bound.join(', ') + " +
		"' alone (flotilla init --cluster-name), so it may not ask for ' + (variables.asked == '' ? 'a CSR without the label " + clusterv1.ClusterNameLabel + "' : 'cluster ' + variables.asked) + " +
		"': join that cluster with a token of its own'"
)

// tokenClusterPolicy is the ValidatingAdmissionPolicy that lets the holder
// of a join token for one cluster create only that cluster's
// ManagedCluster and CSRs labelled with it. The certificate request's
// subject is checked beside it (NewCSRSubjectAdmission, and flotilla
// accept everywhere).
func tokenClusterPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: TokenClusterPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
					{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{clusterv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"managedclusters"}},
					}},
					{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{certificatesv1.GroupName}, APIVersions: []string{"*"}, Resources: []string{"certificatesigningrequests"}},
					}},
				},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "cluster-token", Expression: isClusterTokenExpr}},
			Variables: []admissionregistrationv1.Variable{
				{Name: "bound", Expression: tokenClustersExpr},
				{Name: "asked", Expression: askedClusterExpr},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "variables.asked in variables.bound",
				MessageExpression: tokenClusterMessageExpr,
				Message:           "a join token for one cluster may ask for that cluster alone",
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
}

// tokenClustersOf lists the clusters u's join token is for, if it is a
// token for one cluster.
func tokenClustersOf(u user.Info) []string {
	var clusters []string
	for _, g := range u.GetGroups() {
		if c, ok := strings.CutPrefix(g, bootstraptoken.ClusterGroupPrefix); ok && c != "" {
			clusters = append(clusters, c)
		}
	}
	return clusters
}
