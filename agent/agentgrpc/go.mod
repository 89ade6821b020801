module github.com/latscope/latscope/agent/agentgrpc

go 1.25.0

require (
	github.com/latscope/latscope/agent v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000
	google.golang.org/grpc v1.81.1
	google.golang.org/protobuf v1.36.11
)

require (
	github.com/latscope/latscope/internal/hostsig v0.0.0-00010101000000-000000000000 // indirect
	github.com/latscope/latscope/internal/quantile v0.0.0-00010101000000-000000000000 // indirect
	golang.org/x/exp v0.0.0-20260813180055-c1d0aacb2297 // indirect
	golang.org/x/net v0.51.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260226221140-a57be14db171 // indirect
)

replace (
	github.com/latscope/latscope/agent => ../
	github.com/latscope/latscope/internal/hostsig => ../../internal/hostsig
	github.com/latscope/latscope/internal/quantile => ../../internal/quantile
	github.com/latscope/latscope/tracelog => ../../tracelog
)
