fn main() {
    println!("{}", nandstack_host::config_schema());
}
