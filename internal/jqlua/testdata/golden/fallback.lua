-- .metadata.name | test("^train-")
-- runs on gojq: function test/1
Q[1] = function(v, out)
  J.gojq(FALLBACK, 0, v, out)
end
