package vectors

import (
	"encoding/json"
	"fmt"
)

// seqFile is the layout of the reference-generated files with whole
// scenarios as cases: {kind, source, vectors: [{seq, in, out}]}.
type seqFile struct {
	Vectors []seqCase `json:"vectors"`
}

type seqCase struct {
	Seq *int            `json:"seq,omitempty"`
	In  json.RawMessage `json:"in"`
	Out json.RawMessage `json:"out,omitempty"`
}

// seqKind builds a Kind for the {seq, in, out} layout. Its cases compare
// strictly: an object must have exactly the expected keys, because these
// outputs are whole records of the reference's, where a key being absent
// (a context without "return") is part of the answer.
func seqKind(name, doc string, run func(in json.RawMessage) (any, error)) *Kind {
	outcomes := func(f *File) ([]Outcome, error) {
		var sf seqFile
		if err := json.Unmarshal(f.Raw, &sf); err != nil {
			return nil, fmt.Errorf(`"vectors": %w`, err)
		}
		if sf.Vectors == nil {
			return nil, fmt.Errorf(`a %s file needs "vectors": [{"seq", "in", "out"}]`, name)
		}
		out := make([]Outcome, len(sf.Vectors))
		for i, c := range sf.Vectors {
			n := i
			if c.Seq != nil {
				n = *c.Seq
			}
			o := Outcome{Label: fmt.Sprintf("seq %d", n), In: c.In, Want: c.Out}
			if c.In == nil {
				o.Err = fmt.Errorf("no \"in\"")
			} else {
				o.Got, o.Err = run(c.In)
			}
			out[i] = o
		}
		return out, nil
	}
	return &Kind{
		Name:   name,
		Doc:    doc,
		Strict: true,
		Run:    outcomes,
		Emit: func(f *File) (any, error) {
			var sf seqFile
			if err := json.Unmarshal(f.Raw, &sf); err != nil {
				return nil, fmt.Errorf(`"vectors": %w`, err)
			}
			outs, err := outcomes(f)
			if err != nil {
				return nil, err
			}
			type emitted struct {
				Seq int             `json:"seq"`
				In  json.RawMessage `json:"in"`
				Out any             `json:"out"`
			}
			doc := struct {
				Kind    string    `json:"kind"`
				Source  string    `json:"source"`
				Vectors []emitted `json:"vectors"`
			}{Kind: name, Source: EmitSource}
			for i, o := range outs {
				if o.Err != nil {
					return nil, fmt.Errorf("%s: %v", o.Label, o.Err)
				}
				n := i
				if s := sf.Vectors[i].Seq; s != nil {
					n = *s
				}
				doc.Vectors = append(doc.Vectors, emitted{Seq: n, In: o.In, Out: o.Got})
			}
			return doc, nil
		},
	}
}
