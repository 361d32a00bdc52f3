; JavaScript only (with ecma.scm).
(class_heritage (_) @inherit)
