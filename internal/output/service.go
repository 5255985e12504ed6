package output

import "github.com/ibwire/ibwire/layers"

// ServiceName is the service as -z conv,qp prints it (RC, UC, UD, XRC, RD),
// for viewers that show the same table.
func ServiceName(s layers.ServiceType) string { return serviceName(s) }
