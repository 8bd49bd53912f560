package vectors

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ServeInfo names this implementation in its ready message.
type ServeInfo struct {
	Name, Language, Version string
}

// Serve is this implementation behind the runner protocol: it answers
// hello with ready (every kind that has a per-case form), each case with
// its Compute, and stop with bye, reading in until it ends.
func Serve(info ServeInfo, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriter(out)
	write := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		return w.Flush()
	}
	var kinds []string
	for _, k := range Kinds() {
		if k.Runnable() {
			kinds = append(kinds, k.Name)
		}
	}
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var head struct {
				Op string `json:"op"`
			}
			if jerr := json.Unmarshal(line, &head); jerr != nil {
				return fmt.Errorf("the runner sent a line that is not JSON: %s", jsonProblem(jerr))
			}
			switch head.Op {
			case "hello":
				var h Hello
				if err := ParseMessage("hello", line, &h); err != nil {
					return err
				}
				if err := write(Ready{Op: "ready", Protocol: ProtocolVersion, Name: info.Name, Language: info.Language, Version: info.Version, Kinds: kinds}); err != nil {
					return err
				}
			case "case":
				var c CaseMessage
				if err := ParseMessage("case", line, &c); err != nil {
					return err
				}
				if err := write(answer(c)); err != nil {
					return err
				}
			case "stop":
				return write(Bye{Op: "bye"})
			default:
				return fmt.Errorf("the runner sent op %q (this speaks protocol %d: hello, case, stop)", head.Op, ProtocolVersion)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func answer(c CaseMessage) Answer {
	a := Answer{Op: "answer", ID: c.ID}
	k, err := Lookup(c.Kind)
	if err != nil || !k.Runnable() {
		why := fmt.Sprintf("kind %q is not one this implementation answers case by case", c.Kind)
		a.Skip = &why
		return a
	}
	out, err := k.Compute(c.In)
	if err == nil {
		a.Out, err = json.Marshal(out)
	}
	if err != nil {
		msg := err.Error()
		a.Error, a.Out = &msg, nil
	}
	return a
}
