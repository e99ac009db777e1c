package services

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestFamiliesChange(t *testing.T) {
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	single, dual := ptr.To(corev1.IPFamilyPolicySingleStack), ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	svc := func(policy *corev1.IPFamilyPolicy, families ...corev1.IPFamily) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{IPFamilyPolicy: policy, IPFamilies: families}}
	}
	for _, tc := range []struct {
		name      string
		want, got *corev1.Service
		change    bool
	}{
		{"no families asked: whatever the cluster gave", svc(nil), svc(single, v6), false},
		{"the same single family", svc(single, v4), svc(single, v4), false},
		{"IPv4 exporters turned IPv6", svc(single, v6), svc(single, v4), true},
		{"IPv6 exporters turned IPv4", svc(single, v4), svc(single, v6), true},
		{"single stack turned dual stack", svc(dual, v4, v6), svc(single, v4), true},
		{"dual stack turned single stack", svc(single, v4), svc(dual, v4, v6), true},
		{"dual stack in a single-stack cluster keeps one family", svc(dual, v4, v6), svc(dual, v4), false},
		{"dual stack with the other family first", svc(dual, v6, v4), svc(dual, v4, v6), true},
		{"a Service the API server gave no families", svc(single, v4), svc(nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := familiesChange(tc.want, tc.got); got != tc.change {
				t.Errorf("familiesChange(%v %v, %v %v) = %v, want %v", ptr.Deref(tc.want.Spec.IPFamilyPolicy, ""), tc.want.Spec.IPFamilies,
					ptr.Deref(tc.got.Spec.IPFamilyPolicy, ""), tc.got.Spec.IPFamilies, got, tc.change)
			}
		})
	}
}
