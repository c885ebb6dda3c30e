package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Strict decodes the one JSON value of doc into v, as encoding/json does
// with unknown fields disallowed, and also rejects what encoding/json lets
// through: a key that matches a field only when case is ignored ("Table"
// for "table"), a key given twice in one object (the last would win), and
// anything after the value. Errors wrap errs.ErrInvalidArgument.
func Strict(doc []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := checkKeys(dec, reflect.TypeOf(v), "", 0); err != nil {
		return fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: unexpected data after the document", errs.ErrInvalidArgument)
	}
	d := json.NewDecoder(bytes.NewReader(doc))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	return nil
}

// maxNesting bounds how deep a document nests (encoding/json allows
// 10,000 levels; no document here needs more than a few).
const maxNesting = 64

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// fieldsOf maps the JSON names of struct t's fields to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// encoding/json reads an embedded struct's fields as the outer one's.
			maps.Copy(out, fieldsOf(f.Type))
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func where(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// checkKeys reads one value from dec, checking the keys of its objects
// against t (nil: any value).
func checkKeys(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("%s: nested deeper than %d levels", where(path), maxNesting)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && reflect.PointerTo(t).Implements(unmarshaler) {
		// A type that decodes itself (an Iceberg schema) checks its own keys.
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: unexpected end of the document", where(path))
		}
		return err
	}
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = fieldsOf(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			kp := path + "." + key
			if path == "" {
				kp = key
			}
			if seen[key] {
				return fmt.Errorf("%s: key %q given twice", where(path), key)
			}
			seen[key] = true
			var sub reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return fmt.Errorf("%s: unknown key %q (did you mean %q?)", where(path), key, name)
						}
					}
					return fmt.Errorf("%s: unknown key %q", where(path), key)
				}
				sub = ft
			case t != nil && t.Kind() == reflect.Map:
				sub = t.Elem()
			}
			if err := checkKeys(dec, sub, kp, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := checkKeys(dec, elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	return nil
}
