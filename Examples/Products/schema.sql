-- The tables of the products example: psql -f schema.sql
CREATE TABLE IF NOT EXISTS products (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL
);
CREATE TABLE IF NOT EXISTS prices (
    product_id integer NOT NULL REFERENCES products,
    amount numeric(10, 2) NOT NULL,
    since date NOT NULL DEFAULT current_date
);
