package work

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestHubHash(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		// sha256 of the bytes of the URL, in hex (printf %s URL | sha256sum).
		{"https://127.0.0.1:6443", "6c5003f4dd1691967bd3047645092380ef15affc718a40bf6cc43496f96e552a"},
	}
	for _, tt := range tests {
		if got := HubHash(tt.url); got != tt.want {
			t.Errorf("HubHash(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	if HubHash("https://a:1") == HubHash("https://a:2") {
		t.Error("two hubs hash alike")
	}
}

func TestAppliedManifestWorkName(t *testing.T) {
	tests := []struct {
		name    string
		applied string
		want    string
		ok      bool
	}{
		{"this hub's record", "abc-web", "web", true},
		{"a name with dashes", "abc-web-1", "web-1", true},
		{"another hub's record", "abd-web", "", false},
		{"no work name", "abc-", "", false},
	}
	if got := AppliedManifestWorkName("abc", "web"); got != "abc-web" {
		t.Errorf("AppliedManifestWorkName = %q, want abc-web", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := workName("abc", tt.applied)
			if got != tt.want || ok != tt.ok {
				t.Errorf("workName(%q) = %q, %v; want %q, %v", tt.applied, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestAgentKey(t *testing.T) {
	k := AgentKey(HubHash("https://hub:6443"), "edge-1")
	if msgs := validation.IsValidLabelValue(k); len(msgs) > 0 {
		t.Errorf("AgentKey %q is not a label value: %v", k, msgs)
	}
	for _, other := range []string{AgentKey(HubHash("https://hub:6443"), "edge-2"), AgentKey(HubHash("https://other:6443"), "edge-1")} {
		if other == k {
			t.Errorf("AgentKey is %q for another hub or cluster too", k)
		}
	}
}

func TestManifestHash(t *testing.T) {
	parse := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	a := parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"y"},"data":{"a":"1","b":"2"}}`)
	b := parse(`{"kind":"ConfigMap","data":{"b":"2","a":"1"},"metadata":{"namespace":"y","name":"x"},"apiVersion":"v1"}`)
	c := parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"y"},"data":{"a":"1","b":"3"}}`)
	if manifestHash(a) != manifestHash(b) {
		t.Error("the order of keys changes the hash")
	}
	if manifestHash(a) == manifestHash(c) {
		t.Error("a changed value keeps the hash")
	}
}
