package vectors

import "github.com/laserkit/laserkit/operator"

func shapeKind() *Kind {
	return caseKind("shape", `in: phases, space-separated; out: whether the shape language admits it (adjacent repeats collapsed)`, func(in string) (any, error) {
		return operator.ShapeKnown(in), nil
	})
}
