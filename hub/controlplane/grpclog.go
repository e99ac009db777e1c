package controlplane

import (
	"io"
	"os"

	"google.golang.org/grpc/grpclog"
)

// The API server routes gRPC's logs to klog, and gRPC warns about every
// connection it abandons while the etcd client settles, dozens at each
// start. Keep only gRPC's errors. This runs after the API server's own
// init, which package initialisation order guarantees.
func init() {
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, os.Stderr))
}
