package hub

import (
	"strings"
	"testing"
	"time"
)

func TestLeaseValidate(t *testing.T) {
	tests := []struct {
		name    string
		lease   Lease
		wantErr string
	}{
		{name: "defaults", lease: Lease{}},
		{name: "short", lease: Lease{Duration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: time.Second}},
		{name: "duration not over the renew deadline", lease: Lease{Duration: 4 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: time.Second}, wantErr: "must be longer than --leader-elect-renew-deadline"},
		{name: "renew deadline within the jittered retry period", lease: Lease{Duration: 6 * time.Second, RenewDeadline: 1200 * time.Millisecond, RetryPeriod: time.Second}, wantErr: "must be longer than 1.2 × --leader-elect-retry-period"},
		{name: "zero fields take the defaults", lease: Lease{RetryPeriod: 50 * time.Second}, wantErr: "must be longer than 1.2 × --leader-elect-retry-period"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.lease.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
