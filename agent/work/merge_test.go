package work

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// obj decodes JSON as the dynamic client does (numbers as int64 or float64).
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(stringsReader(s))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return numbers(m).(map[string]any)
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func TestContains(t *testing.T) {
	tests := []struct {
		name       string
		want, have string
		ok         bool
	}{
		{"equal", `{"a":1}`, `{"a":1}`, true},
		{"extra fields on the object", `{"spec":{"a":1}}`, `{"spec":{"a":1,"b":2},"status":{}}`, true},
		{"a changed value", `{"data":{"a":"1"}}`, `{"data":{"a":"2"}}`, false},
		{"a missing field", `{"data":{"a":"1"}}`, `{"data":{}}`, false},
		{"an integer and the same float", `{"replicas":2}`, `{"replicas":2.0}`, true},
		{"lists item by item", `{"c":[{"name":"a","image":"x"}]}`, `{"c":[{"name":"a","image":"x","pull":"Always"}]}`, true},
		{"a list of another length", `{"c":[{"name":"a"}]}`, `{"c":[{"name":"a"},{"name":"sidecar"}]}`, false},
		{"a list item changed", `{"args":["a","b"]}`, `{"args":["a","c"]}`, false},
		{"zero values match missing fields", `{"spec":{"hostNetwork":false,"x":0,"s":"","m":{},"l":[],"t":null}}`, `{"spec":{}}`, true},
		{"a zero value does not match another value", `{"spec":{"paused":false}}`, `{"spec":{"paused":true}}`, false},
		{"a type change", `{"a":{"b":1}}`, `{"a":"b"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contains(obj(t, tt.want), obj(t, tt.have)); got != tt.ok {
				t.Errorf("contains(%s, %s) = %v, want %v", tt.want, tt.have, got, tt.ok)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name            string
		have, want, out string
	}{
		{"sets what the manifest sets, keeps the rest", `{"data":{"a":"1","extra":"x"},"metadata":{"labels":{"l":"1"}}}`, `{"data":{"a":"2"}}`,
			`{"data":{"a":"2","extra":"x"},"metadata":{"labels":{"l":"1"}}}`},
		{"merges lists of equal length item by item", `{"c":[{"name":"a","image":"old","pull":"Always"}]}`, `{"c":[{"name":"a","image":"new"}]}`,
			`{"c":[{"name":"a","image":"new","pull":"Always"}]}`},
		{"replaces lists of another length", `{"c":[{"name":"a"},{"name":"sidecar"}]}`, `{"c":[{"name":"a","image":"x"}]}`,
			`{"c":[{"name":"a","image":"x"}]}`},
		{"replaces a value of another type", `{"a":"b"}`, `{"a":{"b":1}}`, `{"a":{"b":1}}`},
		{"adds missing fields", `{}`, `{"spec":{"replicas":3}}`, `{"spec":{"replicas":3}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			have := obj(t, tt.have)
			before := obj(t, tt.have)
			got := merge(have, obj(t, tt.want))
			if diff := cmp.Diff(obj(t, tt.out), got); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, have); diff != "" {
				t.Errorf("merge changed its argument (-before +after):\n%s", diff)
			}
			if !contains(obj(t, tt.want), got) {
				t.Error("the merged object does not contain the manifest")
			}
		})
	}
}

func TestDriftedFields(t *testing.T) {
	tests := []struct {
		name       string
		want, have string
		fields     []string
	}{
		{"none", `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"}}`, `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"},"status":{}}`, nil},
		{"data", `{"data":{"a":"1"},"binaryData":{}}`, `{"data":{"a":"2"}}`, []string{"data"}},
		{"spec and a label", `{"metadata":{"name":"x","labels":{"app":"a"}},"spec":{"replicas":2}}`,
			`{"metadata":{"name":"x","labels":{"app":"b"}},"spec":{"replicas":5}}`, []string{"metadata.labels", "spec"}},
		{"several, sorted", `{"spec":{"a":1},"data":{"b":2},"metadata":{"annotations":{"x":"1"}}}`, `{"spec":{"a":2},"data":{"b":3},"metadata":{}}`,
			[]string{"data", "metadata.annotations", "spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.fields, driftedFields(obj(t, tt.want), obj(t, tt.have))); diff != "" {
				t.Errorf("driftedFields (-want +got):\n%s", diff)
			}
		})
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
