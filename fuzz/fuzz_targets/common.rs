//! Shared by the recipe targets: every span a reader returns must index the text
//! it was read from (start and end on char boundaries, inside the file).

use engine_audit::recipe::RecipeFile;

pub fn check_spans(file: &RecipeFile) {
    let value = serde_json::to_value(file).expect("a recipe file serializes");
    walk(&value, &file.text);
    for d in &file.deployments {
        walk(&serde_json::to_value(d).unwrap(), &file.text);
    }
}

fn walk(v: &serde_json::Value, text: &str) {
    match v {
        serde_json::Value::Object(map) => {
            if let (Some(off), Some(len), Some(_line)) =
                (map.get("offset").and_then(|o| o.as_u64()), map.get("len").and_then(|o| o.as_u64()), map.get("line"))
            {
                let (off, len) = (off as usize, len as usize);
                assert!(text.get(off..off + len).is_some(), "span {off}+{len} does not index the text (len {})", text.len());
            }
            map.values().for_each(|x| walk(x, text));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|x| walk(x, text)),
        _ => {}
    }
}
