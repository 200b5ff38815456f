package providers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The wire: both APIs take a JSON request and stream server-sent events.
// They are spoken here with net/http and encoding/json: the vendors' SDKs
// were three quarters of the binary's functions, for two endpoints.

// apiError is an error answer of a model API: an HTTP status other than
// 200 with the error object in its body, or an error event in a stream
// that had started (StatusCode 0).
type apiError struct {
	StatusCode int
	Type       string // error.type: "overloaded_error", "server_error", ...
	Code       string // error.code, where the API has one
	Message    string
	// Response is the HTTP answer (its headers: retry-after); nil for an
	// error event.
	Response *http.Response
}

func (e *apiError) Error() string {
	var b strings.Builder
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	} else {
		b.WriteString("error event")
	}
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// errorBody is the error object both APIs answer with (Anthropic wraps
// it in {"type":"error"}).
type errorBody struct {
	Error *struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"error"`
}

// asError reads an error object out of raw JSON: nil when raw holds none.
func asError(raw []byte, status int) *apiError {
	var eb errorBody
	if json.Unmarshal(raw, &eb) != nil || eb.Error == nil {
		return nil
	}
	e := &apiError{StatusCode: status, Type: eb.Error.Type, Message: eb.Error.Message}
	var code string
	if json.Unmarshal(eb.Error.Code, &code) == nil {
		e.Code = code
	} else if len(eb.Error.Code) > 0 && string(eb.Error.Code) != "null" {
		e.Code = string(eb.Error.Code)
	}
	return e
}

// post sends body as JSON to url and returns the streaming answer, or the
// API's error for any status but 200.
func post(ctx context.Context, client *http.Client, url string, header http.Header, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if e := asError(raw, resp.StatusCode); e != nil {
		e.Response = resp
		return nil, e
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return nil, &apiError{StatusCode: resp.StatusCode, Message: msg, Response: resp}
}

// event is one server-sent event.
type event struct {
	name string // the event field; "" when the stream names none
	data []byte
}

// events reads server-sent events from r and calls fn for each, until fn
// returns an error, fn says the stream is done, or r ends. It returns
// io.ErrUnexpectedEOF when r ends before fn said done: the connection was
// cut mid-reply.
func events(r io.Reader, fn func(event) (done bool, err error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var ev event
	var data bytes.Buffer
	for {
		line, err := br.ReadBytes('\n')
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if data.Len() > 0 || ev.name != "" {
				ev.data = bytes.TrimSuffix(data.Bytes(), []byte("\n"))
				done, ferr := fn(ev)
				if ferr != nil || done {
					return ferr
				}
			}
			ev = event{}
			data.Reset()
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			data.Write(value)
			data.WriteByte('\n')
		}
	}
}
