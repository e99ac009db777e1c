package handshake

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestRetryable(t *testing.T) {
	gr := schema.GroupResource{Group: "cluster.open-cluster-management.io", Resource: "managedclusters"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"client timeout, wrapped by explain", cmdutil.Explain(fmt.Errorf("Get https://hub: %w", context.DeadlineExceeded), "the hub API server", "list ManagedClusters"), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "list", 1), true},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), true},
		{"conflict", apierrors.NewConflict(gr, "c1", errors.New("changed")), true},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"forbidden", apierrors.NewForbidden(gr, "c1", errors.New("no")), false},
		{"invalid", apierrors.NewBadRequest("bad"), false},
		{"not found", apierrors.NewNotFound(gr, "c1"), false},
		{"canceled", context.Canceled, false},
	}
	for _, tt := range tests {
		if got := retryable(tt.err); got != tt.want {
			t.Errorf("%s: retryable(%v) = %t, want %t", tt.name, tt.err, got, tt.want)
		}
	}
}
