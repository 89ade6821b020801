package loadgen

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// sampleResults covers every field, the zero start of a dropped request,
// an error with CSV metacharacters and a non-UTC zone.
func sampleResults() []Result {
	t0 := time.Date(2026, 12, 2, 16, 12, 0, 123456789, time.UTC)
	return []Result{
		{Seq: 0, Client: 0, Intended: t0, Start: t0.Add(20 * time.Microsecond), Latency: 20*time.Millisecond + 7, Code: 200, BytesIn: 42, Warmup: true},
		{Seq: 1, Client: 3, Intended: t0.Add(time.Millisecond), Start: t0.Add(time.Millisecond), Latency: time.Second, Code: 500, Error: "500 Internal Server Error", BytesIn: 0},
		{Seq: 2, Client: 1, Intended: t0.In(time.FixedZone("X", 3600)), Start: t0, Latency: 5, Error: `dial tcp 127.0.0.1:1: "refused", sorry` + "\nsecond line", Late: true},
		{Seq: 3, Client: -1, Intended: t0.Add(2 * time.Second), Dropped: true},
	}
}

func equalResult(a, b Result) bool {
	return a.Seq == b.Seq && a.Client == b.Client && a.Intended.Equal(b.Intended) && a.Start.Equal(b.Start) &&
		a.Latency == b.Latency && a.Code == b.Code && a.Error == b.Error && a.BytesIn == b.BytesIn &&
		a.Warmup == b.Warmup && a.Late == b.Late && a.Dropped == b.Dropped
}

func decodeAll(dec Decoder) ([]Result, error) {
	var out []Result
	for {
		var r Result
		err := dec(&r)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

// TestCodecRoundTrip encodes, decodes with the sniffing decoder and the
// format's own, and compares.
func TestCodecRoundTrip(t *testing.T) {
	codecs := []struct {
		name string
		enc  func(io.Writer) Encoder
		dec  func(io.Reader) Decoder
	}{
		{"json", NewJSONEncoder, NewJSONDecoder},
		{"csv", NewCSVEncoder, NewCSVDecoder},
	}
	want := sampleResults()
	for _, c := range codecs {
		var buf bytes.Buffer
		enc := c.enc(&buf)
		for i := range want {
			if err := enc.Encode(&want[i]); err != nil {
				t.Fatalf("%s encode: %v", c.name, err)
			}
		}
		for _, d := range []struct {
			name string
			dec  func(io.Reader) Decoder
		}{{"sniffed", NewDecoder}, {"direct", c.dec}} {
			got, err := decodeAll(d.dec(bytes.NewReader(buf.Bytes())))
			if err != nil {
				t.Fatalf("%s %s decode: %v\n%s", c.name, d.name, err, buf.Bytes())
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s: decoded %d results, want %d", c.name, d.name, len(got), len(want))
			}
			for i := range want {
				if !equalResult(got[i], want[i]) {
					t.Errorf("%s %s result %d:\n got %+v\nwant %+v", c.name, d.name, i, got[i], want[i])
				}
			}
		}
	}
}

func TestJSONFieldNames(t *testing.T) {
	var buf bytes.Buffer
	r := sampleResults()[3]
	if err := NewJSONEncoder(&buf).Encode(&r); err != nil {
		t.Fatal(err)
	}
	want := `{"seq":3,"client":-1,"intended":"2026-12-02T16:12:02.123456789Z","latency_ns":0,"code":0,"bytes_in":0,"dropped":true}` + "\n"
	if buf.String() != want {
		t.Errorf("JSON line\n got %s\nwant %s", buf.String(), want)
	}
}

func TestDecodeErrors(t *testing.T) {
	const csvOK = "seq,client,intended,start,latency_ns,code,error,bytes_in,warmup,late,dropped\n"
	tests := []struct {
		name, in, want string
	}{
		{"json bad line 2", "{\"seq\":1}\n{\"seq\":\"x\"}\n", "results line 2: json: cannot unmarshal"},
		{"json null", "{\"seq\":1}\n\nnull\n", "results line 3: not a JSON object"},
		{"json trailing", `{"seq":1} x`, "results line 1: invalid character 'x'"},
		{"json negative latency", `{"latency_ns":-1}`, "results line 1: latency_ns -1 is negative"},
		{"json bad code", `{"code":1000}`, "results line 1: code 1000 is not an HTTP status code"},
		{"json bad client", `{"client":-2}`, "results line 1: client -2 is below -1"},
		{"json bad time", `{"intended":"yesterday"}`, "results line 1: parsing time"},
		{"json line too long", "{" + strings.Repeat(" ", maxLine+1) + "}", "results line 1: bufio.Scanner: token too long"},
		{"csv fields", csvOK + "1,2,3\n", "results csv: record on line 2: wrong number of fields"},
		{"csv seq", csvOK + "x,0,,,0,0,,0,false,false,false\n", "results csv line 2: column seq: strconv.ParseUint"},
		{"csv time", csvOK + "0,0,noon,,0,0,,0,false,false,false\n", "results csv line 2: column intended: parsing time"},
		{"csv bool", csvOK + "0,0,,,0,0,,0,maybe,false,false\n", "results csv line 2: column warmup: strconv.ParseBool"},
		{"csv negative bytes", "0,0,,,0,0,,-4,false,false,false\n", "results csv line 1: bytes_in -4 is negative"},
		{"csv quote", "0,\"0\n", "results csv: parse error on line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := NewDecoder(strings.NewReader(tt.in))
			_, err := decodeAll(dec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if err2 := dec(&Result{}); !errors.Is(err2, err) {
				t.Errorf("second call = %v, want the same error again", err2)
			}
		})
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n  \n", "seq,client,intended,start,latency_ns,code,error,bytes_in,warmup,late,dropped\n"} {
		got, err := decodeAll(NewDecoder(strings.NewReader(in)))
		if err != nil || len(got) != 0 {
			t.Errorf("decode %q = %v, %v; want no results, no error", in, got, err)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the sniffing decoder: it must not
// panic, and whatever it accepts must survive a JSON re-encoding unchanged
// (after one normalising round, which replaces invalid UTF-8).
func FuzzDecode(f *testing.F) {
	for _, enc := range []func(io.Writer) Encoder{NewJSONEncoder, NewCSVEncoder} {
		var buf bytes.Buffer
		e := enc(&buf)
		for _, r := range sampleResults() {
			e(&r)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"seq":1,"latency_ns":-5}`))
	f.Add([]byte("0,0,,,0,0,,0,false,false,false\n"))
	f.Add([]byte("null\n{}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rs, _ := decodeAll(NewDecoder(bytes.NewReader(in)))
		for _, r := range rs {
			once := reencode(t, r)
			twice := reencode(t, once)
			if !equalResult(once, twice) {
				t.Fatalf("re-encoding changed %+v to %+v", once, twice)
			}
		}
	})
}

// reencode passes r through the JSON codec; r came from a decoder, so the
// encoder must accept it unless its times are outside RFC 3339's years.
func reencode(t *testing.T, r Result) Result {
	var buf bytes.Buffer
	if err := NewJSONEncoder(&buf).Encode(&r); err != nil {
		t.Skipf("encode %+v: %v", r, err)
	}
	var got Result
	if err := NewJSONDecoder(&buf).Decode(&got); err != nil {
		t.Fatalf("decode of encoded %+v: %v\n%s", r, err, buf.Bytes())
	}
	return got
}
