package loadgen

import (
	"fmt"

	"github.com/latscope/latscope/internal/loadresult"
)

// Result is the record of one request. Run produces them; encoders write
// them and decoders read them back. It is declared in package loadresult,
// which readers of results (the JFR reader's window count) share without
// importing the load generator.
type Result = loadresult.Result

// check reports the first field of r that no run can produce.
func check(r *Result) error {
	switch {
	case r.Client < -1:
		return fmt.Errorf("client %d is below -1", r.Client)
	case r.Latency < 0:
		return fmt.Errorf("latency_ns %d is negative", r.Latency)
	case r.Code < 0 || r.Code > 999:
		return fmt.Errorf("code %d is not an HTTP status code", r.Code)
	case r.BytesIn < 0:
		return fmt.Errorf("bytes_in %d is negative", r.BytesIn)
	}
	return nil
}
