package proxy

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// rbac allows alice create on managedclusters/proxy named c1, the
// accepted agent a of c1 get on its ManagedCluster, and anything else to
// nobody.
var rbac = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "alice" && a.GetVerb() == "create" && a.GetAPIGroup() == "cluster.open-cluster-management.io" &&
		a.GetResource() == "managedclusters" && a.GetSubresource() == "proxy" && a.GetName() == "c1" {
		return authorizer.DecisionAllow, "", nil
	}
	if a.GetUser().GetName() == "system:open-cluster-management:c1:a" && a.GetVerb() == "get" && a.GetAPIGroup() == "cluster.open-cluster-management.io" &&
		a.GetResource() == "managedclusters" && a.GetSubresource() == "" && a.GetName() == "c1" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

func TestAuthorizer(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice"}
	agent1 := &user.DefaultInfo{Name: "system:open-cluster-management:c1:a", Groups: []string{"system:open-cluster-management:c1", "system:open-cluster-management:managed-clusters"}}
	// replaced holds a certificate of c1 that the hub's RBAC does not name.
	replaced := &user.DefaultInfo{Name: "system:open-cluster-management:c1:old", Groups: agent1.Groups}
	attrs := func(u user.Info, verb, name, sub string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: "proxy.flotilla.io", APIVersion: "v1", Resource: "clusters", Name: name, Subresource: sub, ResourceRequest: true}
	}
	for _, tc := range []struct {
		name  string
		attrs authorizer.Attributes
		want  authorizer.Decision
	}{
		{"granted cluster, any verb", attrs(alice, "get", "c1", "proxy"), authorizer.DecisionAllow},
		{"granted cluster, watch", attrs(alice, "watch", "c1", "proxy"), authorizer.DecisionAllow},
		{"other cluster", attrs(alice, "get", "c2", "proxy"), authorizer.DecisionDeny},
		{"agent on the door", attrs(agent1, "get", "c1", "proxy"), authorizer.DecisionDeny},
		{"own tunnel", attrs(agent1, "create", "c1", "tunnel"), authorizer.DecisionAllow},
		{"other cluster's tunnel", attrs(agent1, "create", "c2", "tunnel"), authorizer.DecisionDeny},
		{"tunnel of a replaced agent", attrs(replaced, "create", "c1", "tunnel"), authorizer.DecisionDeny},
		{"user opens a tunnel", attrs(alice, "create", "c1", "tunnel"), authorizer.DecisionDeny},
		{"unknown subresource", attrs(alice, "get", "c1", "status"), authorizer.DecisionDeny},
		{"no name", attrs(alice, "list", "", ""), authorizer.DecisionDeny},
		{"other requests pass", authorizer.AttributesRecord{User: alice, Verb: "create", APIGroup: "cluster.open-cluster-management.io", Resource: "managedclusters", Subresource: "proxy", Name: "c1", ResourceRequest: true}, authorizer.DecisionAllow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := Authorizer(rbac).Authorize(context.Background(), tc.attrs)
			if err != nil || got != tc.want {
				t.Errorf("got %v (%s, %v), want %v", got, reason, err, tc.want)
			}
			if got == authorizer.DecisionDeny && reason == "" {
				t.Errorf("a denial must say why")
			}
		})
	}
}
