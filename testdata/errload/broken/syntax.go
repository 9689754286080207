package broken

func (
