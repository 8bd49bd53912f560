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

func seqLabel(i int, seq *int) (int, string) {
	n := i
	if seq != nil {
		n = *seq
	}
	return n, fmt.Sprintf("seq %d", n)
}

// seqKind builds a Kind for the {seq, in, out} layout. Its cases compare
// strictly: an object must have exactly the expected keys, because these
// outputs are whole records of the reference's, where a key being absent
// (a context without "return") is part of the answer.
func seqKind(name, doc string, compute func(in json.RawMessage) (any, error)) *Kind {
	cases := func(f *File) ([]Case, error) {
		var sf seqFile
		if err := json.Unmarshal(f.Raw, &sf); err != nil {
			return nil, fmt.Errorf(`/vectors: %w`, err)
		}
		if sf.Vectors == nil {
			return nil, fmt.Errorf(`a %s file needs "vectors": [{"seq", "in", "out"}]`, name)
		}
		out := make([]Case, len(sf.Vectors))
		for i, c := range sf.Vectors {
			_, label := seqLabel(i, c.Seq)
			if c.In == nil {
				return nil, fmt.Errorf(`/vectors/%d: no "in"`, i)
			}
			out[i] = Case{Label: label, In: c.In, Want: c.Out}
		}
		return out, nil
	}
	return &Kind{
		Name:    name,
		Doc:     doc,
		Strict:  true,
		Cases:   cases,
		Compute: compute,
		Emit: func(f *File) (any, error) {
			var sf seqFile
			if err := json.Unmarshal(f.Raw, &sf); err != nil {
				return nil, fmt.Errorf(`/vectors: %w`, err)
			}
			cs, err := cases(f)
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
			}{Kind: name, Source: EmitSource, Vectors: []emitted{}}
			for i, c := range cs {
				got, err := compute(c.In)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", c.Label, err)
				}
				n, _ := seqLabel(i, sf.Vectors[i].Seq)
				doc.Vectors = append(doc.Vectors, emitted{Seq: n, In: c.In, Out: got})
			}
			return doc, nil
		},
	}
}
