package bootstraptoken

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestReconcileRotates runs the controller through two days on a fake
// clock, waking it when it asks to be woken, and checks at each step that a
// token valid at least the overlap exists and expired ones are gone.
func TestReconcileRotates(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	// A token that flotilla init made by hand is neither rotated nor deleted.
	manual := Secret("manual", "0123456789abcdef", start.Add(time.Hour))
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(manual, ClusterRole()).Build()
	r := &Reconciler{Reader: c, Writer: c, Clock: clk, Rotation: Rotation{Lifetime: 24 * time.Hour, Overlap: 6 * time.Hour}}

	seen := map[string]bool{}
	for clk.Now().Before(start.Add(48 * time.Hour)) {
		res, err := r.Reconcile(ctx, key)
		if err != nil {
			t.Fatalf("at %s: %v", clk.Now(), err)
		}
		now := clk.Now()
		hub := hubTokens(t, c)
		var newest time.Time
		for name, exp := range hub {
			seen[name] = true
			if !exp.After(now) {
				t.Errorf("at %s: expired token %s (expired %s) was not deleted", now, name, exp)
			}
			if exp.After(newest) {
				newest = exp
			}
		}
		if newest.Sub(now) <= r.Rotation.Overlap {
			t.Errorf("at %s: the newest token expires at %s, within the overlap", now, newest)
		}
		if len(hub) > 2 {
			t.Errorf("at %s: %d tokens, want at most 2 (the current and the one before)", now, len(hub))
		}
		if res.RequeueAfter <= 0 {
			t.Fatalf("at %s: RequeueAfter %s, want a wake-up", now, res.RequeueAfter)
		}
		clk.SetTime(now.Add(res.RequeueAfter))
	}
	// One at the start, then one every 18 hours: at 18h and 36h.
	if len(seen) != 3 {
		t.Errorf("created %d tokens in 48h, want 3", len(seen))
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(manual), &corev1.Secret{}); err != nil {
		t.Errorf("the token made by hand: %v", err)
	}
}

// TestReconcileClosed checks that a hub whose bootstrap ClusterRole was
// deleted (clusteradm delete token) makes no token, still deletes expired
// ones, and rotates again once the ClusterRole is back (flotilla init).
func TestReconcileClosed(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	expired := Secret("expired", "0123456789abcdef", start.Add(-time.Minute))
	expired.Labels[RotationLabel] = RotationValue
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(expired).Build()
	r := &Reconciler{Reader: c, Writer: c, Clock: clk, Rotation: DefaultRotation}
	res, err := r.Reconcile(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if hub := hubTokens(t, c); len(hub) != 0 {
		t.Errorf("closed join path: tokens %v, want none", hub)
	}
	if res.RequeueAfter != 0 {
		t.Errorf("closed join path with no token: RequeueAfter %s, want none (the ClusterRole's return wakes it)", res.RequeueAfter)
	}
	if err := c.Create(ctx, ClusterRole()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	if hub := hubTokens(t, c); len(hub) != 1 {
		t.Errorf("opened again: tokens %v, want one", hub)
	}
}

func hubTokens(t *testing.T, c client.Client) map[string]time.Time {
	t.Helper()
	list := &corev1.SecretList{}
	if err := c.List(context.Background(), list, client.InNamespace(metav1.NamespaceSystem), client.MatchingLabels{RotationLabel: RotationValue}); err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for i := range list.Items {
		s := &list.Items[i]
		exp, ok := Expiration(s)
		if !ok {
			t.Fatalf("%s: no expiration", s.Name)
		}
		if s.Labels[AppLabel] != AppValue {
			t.Errorf("%s: no label %s=%s, which clusteradm looks for", s.Name, AppLabel, AppValue)
		}
		out[s.Name] = exp
	}
	return out
}
