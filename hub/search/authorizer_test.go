package search

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// rbac allows get on managedclusters named after the cluster to the user
// "agent-of-<cluster>" only, as the hub's RBAC does its accepted agent.
var rbac = authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetResource() == "managedclusters" && a.GetVerb() == "get" && a.GetUser().GetName() == "agent-of-"+a.GetName() {
		return authorizer.DecisionAllow, "", nil
	}
	if a.GetResource() == "searchconfigs" {
		return authorizer.DecisionAllow, "rbac decided", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

func TestAuthorizer(t *testing.T) {
	agent := func(cluster, name string) user.Info {
		return &user.DefaultInfo{Name: name, Groups: []string{AgentGroupPrefix + cluster, user.AllAuthenticated}}
	}
	ingest := func(u user.Info, verb, cluster, sub string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: "search.flotilla.io", APIVersion: "v1alpha1",
			Resource: "ingest", Name: cluster, Subresource: sub, ResourceRequest: true}
	}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		allow bool
		says  string
	}{
		{"own agent posts changes", ingest(agent("c1", "agent-of-c1"), "create", "c1", "changes"), true, ""},
		{"own agent reads versions", ingest(agent("c1", "agent-of-c1"), "get", "c1", "versions"), true, ""},
		{"another cluster's agent", ingest(agent("c2", "agent-of-c2"), "create", "c1", "changes"), false, "only the agent of cluster c1 may write its search index rows; agent-of-c2 is not"},
		{"a certificate of the cluster that is not its accepted agent", ingest(agent("c1", "stolen"), "create", "c1", "changes"), false, "only the accepted agent of cluster c1"},
		{"a hub user", ingest(alice, "create", "c1", "changes"), false, "only the agent of cluster c1"},
		{"deleting", ingest(agent("c1", "agent-of-c1"), "delete", "c1", "changes"), false, "POST ingest/<cluster>/changes and GET ingest/<cluster>/versions only"},
		{"a user queries", authorizer.AttributesRecord{User: alice, Verb: "list", APIGroup: "search.flotilla.io", Resource: "search", ResourceRequest: true}, true, ""},
		{"SearchConfigs go to RBAC", authorizer.AttributesRecord{User: alice, Verb: "list", APIGroup: "search.flotilla.io", Resource: "searchconfigs", ResourceRequest: true}, true, "rbac decided"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, _ := Authorizer(rbac).Authorize(context.Background(), tc.attrs)
			if (d == authorizer.DecisionAllow) != tc.allow || !strings.Contains(reason, tc.says) {
				t.Errorf("decision %v %q, want allow=%v saying %q", d, reason, tc.allow, tc.says)
			}
		})
	}
}
