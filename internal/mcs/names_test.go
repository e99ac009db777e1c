package mcs

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSetNamespace(t *testing.T) {
	if got := SetNamespace("prod"); got != "flotilla-clusterset-prod" {
		t.Errorf("SetNamespace(prod) = %q", got)
	}
	long := strings.Repeat("a", 60)
	got := SetNamespace(long)
	if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
		t.Errorf("SetNamespace(60 a's) = %q, not a namespace name: %v", got, errs)
	}
	if other := SetNamespace(long + "b"); other == got {
		t.Errorf("two long set names share namespace %q", got)
	}
}

func TestDerivedServiceName(t *testing.T) {
	got := DerivedServiceName("default", "web")
	if !strings.HasPrefix(got, "derived-") || len(got) != len("derived-")+10 {
		t.Fatalf("DerivedServiceName = %q, want derived- and 10 characters", got)
	}
	if errs := validation.IsDNS1035Label(got); len(errs) > 0 {
		t.Errorf("DerivedServiceName = %q, not a Service name: %v", got, errs)
	}
	if DerivedServiceName("default", "web2") == got {
		t.Error("two services share a derived name")
	}
}
