package registration

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestFollowLease(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(period int32, change string, renewed time.Time) *coordinationv1.Lease {
		l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewed}}}
		if period > 0 {
			l.Spec.LeaseDurationSeconds = ptr.To(period)
		}
		if change != "" {
			l.Annotations = map[string]string{leaseChangeAnnotation: change}
		}
		return l
	}
	seen := now.Add(-20 * time.Second)
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		spec  int32
		want  leaseFollow
	}{
		{"no change", lease(60, "", now.Add(-time.Minute)), 60,
			leaseFollow{graceSeconds: 60, period: 60}},
		{"a lease without a duration takes the spec's", lease(0, "", now), 10,
			leaseFollow{graceSeconds: 10, period: 10}},
		{"lowered just now: the old grace applies, the change is recorded", lease(60, "", now.Add(-55*time.Second)), 10,
			leaseFollow{graceSeconds: 60, period: 60, change: formatLeaseChange(10, now), recheck: 21 * time.Second}},
		{"a renewal within the settle time does not prove the new period", lease(60, formatLeaseChange(10, seen), seen.Add(5*time.Second)), 10,
			leaseFollow{graceSeconds: 60, period: 60, change: formatLeaseChange(10, seen), recheck: time.Second}},
		{"a renewal after the settle time does: the new grace applies", lease(60, formatLeaseChange(10, seen), seen.Add(11*time.Second)), 10,
			leaseFollow{graceSeconds: 10, period: 10}},
		{"raised: the new, longer grace applies at once", lease(10, "", now.Add(-30*time.Second)), 60,
			leaseFollow{graceSeconds: 60, period: 10, change: formatLeaseChange(60, now), recheck: 121 * time.Second}},
		{"changed again before the agent followed: the longer earlier period stays known", lease(10, formatLeaseChange(60, seen), seen.Add(time.Second)), 5,
			leaseFollow{graceSeconds: 60, period: 60, change: formatLeaseChange(5, now), recheck: 11 * time.Second}},
		{"an unreadable annotation counts as a change seen now", lease(60, "soon", now.Add(-time.Second)), 10,
			leaseFollow{graceSeconds: 60, period: 60, change: formatLeaseChange(10, now), recheck: 21 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := followLease(tc.lease, tc.spec, now); got != tc.want {
				t.Errorf("followLease = %+v, want %+v", got, tc.want)
			}
		})
	}
}
