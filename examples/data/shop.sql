-- The sample database of examples/workflows/sql-agent.json.
-- shop.db is built from this file: python3 -c "import sqlite3; c = sqlite3.connect('shop.db'); c.executescript(open('shop.sql').read())"
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT UNIQUE,
    city TEXT,
    joined DATE
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price REAL NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL,
    ordered_at DATE NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE staff_salaries (id INTEGER PRIMARY KEY, name TEXT, salary INTEGER);

INSERT INTO customers VALUES
    (1, 'Ada Lovelace', 'ada@example.com', 'London', '2024-01-15'),
    (2, 'Alan Turing', 'alan@example.com', 'Manchester', '2024-02-03'),
    (3, 'Grace Hopper', 'grace@example.com', 'New York', '2024-03-21'),
    (4, 'Katherine Johnson', 'katherine@example.com', 'Hampton', '2024-05-09'),
    (5, 'Edsger Dijkstra', 'edsger@example.com', 'Eindhoven', '2024-06-30');
INSERT INTO products VALUES
    (1, 'Mechanical keyboard', 'hardware', 129.0),
    (2, 'Ergonomic mouse', 'hardware', 59.5),
    (3, 'SQL for agents (e-book)', 'books', 24.0),
    (4, 'Rust in practice (e-book)', 'books', 32.0),
    (5, 'Cloud credits', 'services', 100.0);
INSERT INTO orders VALUES
    (1, 1, 1, 1, '2024-07-01', 'shipped'),
    (2, 1, 3, 2, '2024-07-03', 'shipped'),
    (3, 2, 4, 1, '2024-07-10', 'open'),
    (4, 3, 5, 3, '2024-08-01', 'shipped'),
    (5, 4, 2, 2, '2024-08-15', 'cancelled'),
    (6, 5, 4, 1, '2024-09-02', 'open'),
    (7, 3, 1, 1, '2024-09-20', 'open');
INSERT INTO staff_salaries VALUES (1, 'Secret Person', 250000);
