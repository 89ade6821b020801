// Package httpurl checks the HTTP URLs latscope's commands and libraries
// are given: one rule for the load generator, capture and the lab. Redact
// hides the password of any URL before it is printed.
package httpurl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Check checks that s is an absolute http or https URL with a host and, if
// it has a port, one from 1 to 65535. The error says what is wrong, not s:
// callers name the option that held it.
func Check(s string) error {
	_, err := Parse(s)
	return err
}

// Parse is Check that also returns the parsed URL.
func Parse(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("scheme must be http:// or https://")
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %s: want 1 to 65535", p)
		}
	}
	return u, nil
}

// userinfoRE matches the userinfo of a URL with a password, as in
// "//user:password@": the user ends at the first ':', the password at the
// last '@' before the end of the authority ('/', '?', '#', a space or a
// quote).
var userinfoRE = regexp.MustCompile(`//([^/?#\s"'<>:]*):[^/?#\s"'<>]*@`)

// Redact returns s with the password of every URL in it replaced by
// "xxxxx": an http(s) or postgres URL, a URL that does not parse (several
// hosts, a bad port), or text such as an error message holding one
// ("//user:pw@"). The user name is kept. A string without a password is
// returned as it is. Print URLs that came from a flag, a config or an
// error only through Redact.
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.User != nil && !strings.ContainsAny(s, " \t\r\n\"'") {
		if _, ok := u.User.Password(); ok {
			s = u.Redacted()
		}
	}
	if !userinfoRE.MatchString(s) {
		return s
	}
	return userinfoRE.ReplaceAllString(s, "//$1:xxxxx@")
}

// RedactError returns err with every URL password in its message hidden
// (Redact); errors.Is and errors.As still see err. It returns err itself
// when its message holds no password.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	if msg := Redact(err.Error()); msg != err.Error() {
		return &redactedError{err, msg}
	}
	return err
}

// redactedError is an error whose message held a URL's password: Error is
// the message without it, Unwrap the error as it was.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Origin returns u's scheme, lower-case host and port (the scheme's
// default port when u has none): two URLs with the same origin reach the
// same server, and credentials given for one may go to the other only.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
