package query

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// countingAuthz is grantsAuthz counting its decisions.
type countingAuthz struct {
	grantsAuthz
	asked int
}

func (c *countingAuthz) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	c.asked++
	return c.grantsAuthz.Authorize(ctx, a)
}

func TestAccessRemembersEachUserForAccessTTL(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	authz := &countingAuthz{grantsAuthz: grantsAuthz{"alice": {"c1"}}}
	a := &access{authz: authz, now: func() time.Time { return now }, byUser: map[string]visible{},
		clusters: func(context.Context) ([]string, error) { return []string{"c2", "c1"}, nil }}
	alice := &user.DefaultInfo{Name: "alice"}
	ctx := context.Background()

	see := func(want ...string) {
		t.Helper()
		got, err := a.clustersFor(ctx, alice, nil, nil)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("clusters %v, %v; want %v", got, err, want)
		}
	}
	see("c1")
	asked := authz.asked
	see("c1")
	if authz.asked != asked {
		t.Errorf("asked the authorizer again within AccessTTL")
	}
	authz.grantsAuthz["alice"] = []string{"c1", "c2"}
	now = now.Add(AccessTTL)
	see("c1", "c2")
	if got, _ := a.clustersFor(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"admins"}}, []string{"c2", "c3"}, nil); !slices.Equal(got, []string{"c2"}) {
		t.Errorf("another user's (groups differ) named clusters: %v, want [c2]", got)
	}
	if got, _ := a.clustersFor(ctx, &user.DefaultInfo{Name: "bob"}, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("bob's clusters %#v: want an empty, non-nil list (none, not every cluster)", got)
	}
}
